"""Pure tests of locus_client (no server): what a Client is made of, where
its key comes from, how a refusal reads, and what it sends for a file.
Run: python3 -m unittest test_locus_client (ctest: unit.python_locus_client).
The module against a real locusd: tests/integration/remote_submit.sh."""

import hashlib
import json
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

    def test_campaign_calls_go_to_the_apis_routes(self):
        c = Client("http://h/", key="k")
        answers = {("GET", "campaigns"): {"campaigns": [{"id": 7}]},
                   ("GET", "campaigns/7/events"): {"campaign_id": 7, "events": []}}
        with mock.patch.object(Client, "_json", side_effect=lambda m, p, b=None: answers.get((m, p), {"id": 7})) as j:
            self.assertEqual(c.campaigns(), [{"id": 7}])
            self.assertEqual(c.campaign("7"), {"id": 7})
            self.assertEqual(c.campaign_events(7), [])
            c.pause_campaign(7)
            c.resume_campaign(7)
            c.cancel_campaign(7)
            c.add_params(7, iter(["a 1", "b 2"]))
            c.fix_event(3, 1)
            self.assertEqual(c.submit_campaign({"name": "n", "nb_jobs": 2}), 7)
        self.assertEqual(j.call_args_list, [
            mock.call("GET", "campaigns"), mock.call("GET", "campaigns/7"), mock.call("GET", "campaigns/7/events"),
            mock.call("POST", "campaigns/7/pause"), mock.call("POST", "campaigns/7/resume"),
            mock.call("POST", "campaigns/7/cancel"), mock.call("POST", "campaigns/7/params", {"params": ["a 1", "b 2"]}),
            mock.call("POST", "events/3/fix", {"resubmit": True}),
            mock.call("POST", "campaigns", {"name": "n", "nb_jobs": 2})])

    def test_campaign_outputs_go_to_their_routes(self):
        c = Client("http://h/", key="k")
        with mock.patch.object(Client, "_json", return_value={"campaign_id": 7, "outputs": [{"name": "a"}]}) as j:
            self.assertEqual(c.campaign_outputs("7"), [{"name": "a"}])
        j.assert_called_once_with("GET", "campaigns/7/outputs")
        with mock.patch.object(Client, "_download", side_effect=lambda p, d: (p, d)) as d:
            self.assertEqual(c.download_campaign_results(7, "x.tar"), ("campaigns/7/results", "x.tar"))
            self.assertEqual(c.download_campaign_results(7, "y.tar", job=12), ("campaigns/7/jobs/12/results", "y.tar"))
            with self.assertRaises(ValueError):
                c.download_campaign_results(7, "z.tar", job="1/../x")
        self.assertEqual(d.call_count, 2)

    def test_an_id_that_is_not_a_number_is_refused_before_any_request(self):
        c = Client("http://h/", key="k")
        with mock.patch.object(Client, "_open") as o:
            for bad in ("1/../x", "x"):
                with self.assertRaises(ValueError):
                    c.campaign(bad)
            o.assert_not_called()

    def test_a_param_files_text_goes_beside_the_jdl(self):
        c = Client("http://h/", key="k")
        with mock.patch.object(Client, "_json", return_value={"id": 4}) as j:
            jdl = {"name": "n", "param_file": "p.txt"}
            self.assertEqual(c.submit_campaign(jdl, params_text="a 1\n"), 4)
            self.assertEqual(c.submit_campaign(json.dumps(jdl), params_text="b 2\n"), 4)
        self.assertEqual(jdl, {"name": "n", "param_file": "p.txt"})   # the caller's dict is left as it was
        self.assertEqual([x.args[2]["param_file_text"] for x in j.call_args_list], ["a 1\n", "b 2\n"])

    def test_a_jdls_text_is_sent_as_written(self):
        c = Client("http://h/", key="k")
        text = '{"name": "n",\n "nb_jobs": 1}'
        answer = mock.MagicMock()
        answer.__enter__.return_value.read.return_value = b'{"id": 9}'
        with mock.patch.object(Client, "_open", return_value=answer) as o:
            self.assertEqual(c.submit_campaign(text), 9)
        o.assert_called_once_with("POST", "campaigns", text.encode(), {"Content-Type": "application/json"})


if __name__ == "__main__":
    unittest.main()
