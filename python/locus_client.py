"""locus_client - submit work to a locus server from your own machine.

The REST API of locusd (docs/api.md) with the standard library only
(urllib, json, hashlib, ssl): upload input files, create a batch, follow
it, cancel it, wait for it, download its results. Works with Python 3.9
and later (Debian's /usr/bin/python3 included).

    from locus_client import Client
    c = Client("https://locus.example.org:8443/", key_file="~/.locus_key",
               cafile="ca.pem")
    c.upload("in.dat", "data/in.dat")
    b = c.create_batch(app="worker", name="run1",
                       jobs=[{"cmdline": "--seed 1", "inputs": ["in.dat=in"]}])
    c.wait(b["batch"])
    c.download_results(b["batch"], "run1.tar")

Every refusal raises LocusError with the server's message and the HTTP
status (0 when no answer came).
"""

import hashlib
import json
import os
import shutil
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request

__all__ = ["Client", "LocusError", "DONE_STATES"]

# batch states at which nothing more happens (model.h's batch_state_name)
DONE_STATES = ("done", "cancelled")
_CHUNK = 1 << 20


class LocusError(Exception):
    """A request the server refused (status >= 400) or that got no answer
    (status 0); message is the server's {"error": ...} when it sent one."""

    def __init__(self, message, status=0):
        super().__init__("%s (HTTP %d)" % (message, status) if status else message)
        self.message = message
        self.status = status


def _sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(_CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def _quote(name):
    return urllib.parse.quote(str(name), safe="")


class Client:
    """One locus server and one submit key.

    url: the server's base URL (http:// or https://, any path after the
    host is ignored: the API is at /api/v1/). The key: key, or the first
    line of key_file, or $LOCUS_KEY, or the file $LOCUS_KEY_FILE. cafile:
    the CA of a server with a private certificate (None: the system's)."""

    def __init__(self, url, key=None, key_file=None, cafile=None, timeout=60):
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError("url must be http://HOST[:PORT]/ or https://HOST[:PORT]/, not %r" % url)
        self.base = "%s://%s/api/v1/" % (parts.scheme, parts.netloc)
        if key is None:
            key_file = key_file or os.environ.get("LOCUS_KEY_FILE")
            if key_file:
                with open(os.path.expanduser(key_file)) as f:
                    key = f.readline().strip()
            else:
                key = os.environ.get("LOCUS_KEY")
        if not key:
            raise ValueError("no submit key: give key or key_file, or set LOCUS_KEY or LOCUS_KEY_FILE")
        self.key = key
        self.timeout = timeout
        self.context = ssl.create_default_context(cafile=cafile) if parts.scheme == "https" else None

    # ---- requests ----

    def _open(self, method, path, data=None, headers=None):
        req = urllib.request.Request(self.base + path, data=data, method=method)
        req.add_header("Authorization", "Bearer " + self.key)
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        try:
            return urllib.request.urlopen(req, timeout=self.timeout, context=self.context)
        except urllib.error.HTTPError as e:
            body = e.read()
            try:
                message = json.loads(body)["error"]
            except (ValueError, KeyError, TypeError):
                message = body.decode("utf-8", "replace").strip() or e.reason
            raise LocusError(message, e.code) from None
        except (urllib.error.URLError, OSError) as e:
            raise LocusError("%s: %s" % (self.base, getattr(e, "reason", e))) from None

    def _json(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        headers = {} if data is None else {"Content-Type": "application/json"}
        if method == "POST" and data is None:
            data, headers = b"{}", {"Content-Type": "application/json"}
        with self._open(method, path, data, headers) as r:
            return json.loads(r.read())

    # ---- files ----

    def upload(self, name, path, sticky=False, report_on_rpc=False):
        """Registers the file at path as input file name (PUT files/NAME),
        streamed, with its SHA-256 for the server to check. Returns the
        server's answer: name, nbytes, md5, existed (true when the same
        content was there already)."""
        query = urllib.parse.urlencode([(k, "1") for k, on in (("sticky", sticky), ("report_on_rpc", report_on_rpc))
                                        if on])
        headers = {"X-Locus-SHA256": _sha256_of(path), "Content-Length": str(os.path.getsize(path)),
                   "Content-Type": "application/octet-stream"}
        with open(path, "rb") as f:
            with self._open("PUT", "files/" + _quote(name) + ("?" + query if query else ""), f, headers) as r:
                return json.loads(r.read())

    # ---- batches ----

    def create_batch(self, app, jobs=None, template=None, count=None, **options):
        """Creates a batch of app (POST batches) owned by the key's user:
        jobs, a list of job descriptions, or template with count; options
        as `locus batch create`'s with underscores (name, quorum,
        delay_bound, outputs, no_output, flops, cursors...). Returns
        batch_id, batch (its name), jobs, cursors."""
        body = dict(options, app=app)
        if jobs is not None:
            body["jobs"] = list(jobs)
        if template is not None:
            body["template"] = template
            body["count"] = count
        return self._json("POST", "batches", body)

    def batch(self, batch):
        """The batch's figures (GET batches/KEY): state, jobs, done, failed..."""
        return self._json("GET", "batches/" + _quote(batch))

    def failures(self, batch):
        """What went wrong in the batch (GET batches/KEY/failures)."""
        return self._json("GET", "batches/%s/failures" % _quote(batch))

    def cancel(self, batch):
        """Cancels the batch (POST batches/KEY/cancel): batch_id, batch, was, state."""
        return self._json("POST", "batches/%s/cancel" % _quote(batch))

    def wait(self, batch, timeout=None, poll=5.0):
        """Polls the batch until it is done or cancelled and returns its
        figures; LocusError (status 0) after timeout seconds."""
        end = None if timeout is None else time.monotonic() + timeout
        while True:
            b = self.batch(batch)
            if b["state"] in DONE_STATES:
                return b
            if end is not None and time.monotonic() >= end:
                raise LocusError("batch %s is still %s after %g s" % (batch, b["state"], timeout))
            time.sleep(poll)

    def download_results(self, batch, dest, job=None):
        """The canonical outputs of the batch (or of one job) as a tar
        archive into the file dest (BATCH/JOB/FILE inside), streamed, and
        through dest.part so that a cut download is not left as whole."""
        return self._download("batches/%s%s/results" % (_quote(batch), "/jobs/" + _quote(job) if job else ""),
                              dest)

    def _download(self, path, dest):
        """GET path streamed into the file dest, through dest.part."""
        part = dest + ".part"
        try:
            with self._open("GET", path) as r, open(part, "wb") as out:
                shutil.copyfileobj(r, out, _CHUNK)
            os.replace(part, dest)
        finally:
            if os.path.exists(part):
                os.unlink(part)
        return dest

    # ---- sequences ----

    def create_sequences(self, **order):
        """POST sequences: name, app, length, max_result_time... (docs/api.md)."""
        return self._json("POST", "sequences", order)

    def extend_sequence(self, name, positions):
        return self._json("POST", "sequences/%s/extend" % _quote(name), {"positions": positions})

    def end_sequence(self, name):
        return self._json("POST", "sequences/%s/end" % _quote(name))

    # ---- campaigns (docs/campaigns.md) ----

    def submit_campaign(self, jdl, params_text=None):
        """Submits a campaign (POST campaigns) owned by the key's user: jdl,
        the JDL as a dict (or its JSON text, sent as written), and
        params_text, the text of its param_file, which the server cannot
        read. Returns the campaign's id."""
        if params_text is not None:
            jdl = dict(json.loads(jdl) if isinstance(jdl, str) else jdl, param_file_text=params_text)
        if isinstance(jdl, str):
            with self._open("POST", "campaigns", jdl.encode(), {"Content-Type": "application/json"}) as r:
                return json.loads(r.read())["id"]
        return self._json("POST", "campaigns", jdl)["id"]

    def campaigns(self):
        """The key's user's campaigns (GET campaigns), a list."""
        return self._json("GET", "campaigns")["campaigns"]

    def campaign(self, campaign):
        """One campaign with its clusters and open events (GET campaigns/ID)."""
        return self._json("GET", "campaigns/%d" % int(campaign))

    def campaign_events(self, campaign):
        """Every event of the campaign (GET campaigns/ID/events), a list."""
        return self._json("GET", "campaigns/%d/events" % int(campaign))["events"]

    def pause_campaign(self, campaign):
        """No new jobs; the running ones go on. Returns the campaign after it."""
        return self._json("POST", "campaigns/%d/pause" % int(campaign))

    def resume_campaign(self, campaign):
        return self._json("POST", "campaigns/%d/resume" % int(campaign))

    def cancel_campaign(self, campaign):
        return self._json("POST", "campaigns/%d/cancel" % int(campaign))

    def add_params(self, campaign, params):
        """One job per param (each one line of a param file), POST
        campaigns/ID/params. Returns the campaign after it."""
        return self._json("POST", "campaigns/%d/params" % int(campaign), {"params": list(params)})

    def campaign_outputs(self, campaign):
        """The outputs the campaign's jobs sent (GET campaigns/ID/outputs):
        a list of {"job_id", "name", "size", "sha256"}, with "location" for
        one its job stored at the campaign's output_destination."""
        return self._json("GET", "campaigns/%d/outputs" % int(campaign))["outputs"]

    def download_campaign_results(self, campaign, dest, job=None):
        """The outputs of the campaign (or of one job) as a tar archive into
        the file dest (campaign-ID/JOB/FILE inside), as download_results."""
        return self._download("campaigns/%d%s/results" % (int(campaign), "/jobs/%d" % int(job) if job else ""), dest)

    def fix_event(self, event, resubmit):
        """Closes the event (POST events/ID/fix); resubmit: the jobs it gave
        up go back to the queue. Returns the event after it."""
        return self._json("POST", "events/%d/fix" % int(event), {"resubmit": bool(resubmit)})
