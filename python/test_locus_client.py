"""Pure tests of locus_client (no server): what a Client is made of, where
its key comes from, how a refusal reads, and what it sends for a file.
Run: python3 -m unittest test_locus_client (ctest: unit.python_locus_client).
The module against a real locusd: tests/integration/remote_submit.sh."""

import hashlib
import os
import tempfile
import unittest
from unittest import mock

import locus_client
from locus_client import Client, LocusError


class ClientTest(unittest.TestCase):
    def test_the_api_is_under_the_servers_root(self):
        self.assertEqual(Client("https://h.example:8443/proj/", key="k").base, "https://h.example:8443/api/v1/")
        self.assertEqual(Client("http://127.0.0.1:8080", key="k").base, "http://127.0.0.1:8080/api/v1/")

    def test_a_url_that_is_not_http_is_refused(self):
        for url in ("ftp://h/", "h.example:80", "https://", "file:///etc/passwd"):
            with self.assertRaises(ValueError, msg=url):
                Client(url, key="k")

    def test_the_key_comes_from_the_argument_a_file_or_the_environment(self):
        with tempfile.NamedTemporaryFile("w", delete=False) as f:
            f.write("filekey\nignored\n")
        try:
            with mock.patch.dict(os.environ, {"LOCUS_KEY": "envkey", "LOCUS_KEY_FILE": ""}):
                self.assertEqual(Client("http://h/", key="argkey").key, "argkey")
                self.assertEqual(Client("http://h/", key_file=f.name).key, "filekey")
                self.assertEqual(Client("http://h/").key, "envkey")
            with mock.patch.dict(os.environ, {"LOCUS_KEY_FILE": f.name}, clear=True):
                self.assertEqual(Client("http://h/").key, "filekey")
            with mock.patch.dict(os.environ, {}, clear=True):
                with self.assertRaises(ValueError):
                    Client("http://h/")
        finally:
            os.unlink(f.name)

    def test_an_error_carries_the_servers_message_and_status(self):
        e = LocusError("unknown app 'x'", 404)
        self.assertEqual((e.message, e.status), ("unknown app 'x'", 404))
        self.assertEqual(str(e), "unknown app 'x' (HTTP 404)")
        self.assertEqual(str(LocusError("no answer")), "no answer")
        self.assertEqual(LocusError("no answer").status, 0)

    def test_a_files_digest_is_read_in_blocks(self):
        with tempfile.NamedTemporaryFile(delete=False) as f:
            data = os.urandom(3 * (1 << 20) + 5)
            f.write(data)
        try:
            self.assertEqual(locus_client._sha256_of(f.name), hashlib.sha256(data).hexdigest())
        finally:
            os.unlink(f.name)

    def test_names_are_escaped_in_paths(self):
        self.assertEqual(locus_client._quote("a/b c"), "a%2Fb%20c")
        self.assertEqual(locus_client._quote(12), "12")


if __name__ == "__main__":
    unittest.main()
