#!/usr/bin/env python3
"""browser.py - a real browser for the web site's tests: Debian's headless
Chromium driven by its chromedriver over the W3C WebDriver protocol, with
the Python standard library only (docs/testing.md, docs/web.md).

As a module:
    with Browser(artifacts) as b:
        b.get(url); b.wait_ready()           # the page's script ended (body[data-ready])
        b.fill('#email', 'x@example.org'); b.click('#submit')
        b.text('#credit'); b.dom(); b.screenshot('account')   # artifacts/account.png
As a command (from a shell test):
    browser.py load URL NAME [ARTIFACTS]
        prints the page's DOM once its script ended, keeps NAME.png (and
        NAME.html) in ARTIFACTS (default $LOCUS_BUILD_DIR/test-artifacts/web).
Exits 2 when chromium or chromedriver is missing (scripts/deps.sh)."""
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

ELEMENT = 'element-6066-11e4-a52e-4f735466cecf'   # the W3C key of an element reference
CHROMIUM = os.environ.get('LOCUS_CHROMIUM', '/usr/bin/chromium')
CHROMEDRIVER = os.environ.get('LOCUS_CHROMEDRIVER', '/usr/bin/chromedriver')


class BrowserError(Exception):
    pass


def default_artifacts():
    build = os.environ.get('LOCUS_BUILD_DIR', 'build')
    return os.path.join(build, 'test-artifacts', 'web')


def _free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


class Browser:
    """One headless Chromium, one window, 1280x900, its own profile."""

    def __init__(self, artifacts=None, timeout=20):
        for exe in (CHROMIUM, CHROMEDRIVER):
            if not os.access(exe, os.X_OK):
                raise BrowserError(exe + ' is missing: run scripts/deps.sh (chromium, chromium-driver)')
        self.artifacts = artifacts or default_artifacts()
        os.makedirs(self.artifacts, exist_ok=True)
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix='site-browser-')
        port = _free_port()
        self.base = 'http://127.0.0.1:%d' % port
        self.log = open(os.path.join(self.profile, 'chromedriver.log'), 'w')
        self.driver = subprocess.Popen([CHROMEDRIVER, '--port=%d' % port], stdout=self.log,
                                       stderr=subprocess.STDOUT, start_new_session=True)
        self.session = None
        deadline = time.time() + 15
        while True:
            try:
                if self._call('GET', '/status')['ready']:
                    break
            except (OSError, BrowserError):
                pass
            if time.time() > deadline or self.driver.poll() is not None:
                self.close()
                raise BrowserError('chromedriver did not start')
            time.sleep(0.1)
        args = ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
                '--window-size=1280,900', '--no-first-run', '--disable-extensions',
                '--user-data-dir=' + os.path.join(self.profile, 'profile')]
        caps = {'capabilities': {'alwaysMatch': {
            'browserName': 'chrome', 'pageLoadStrategy': 'normal',
            'goog:chromeOptions': {'binary': CHROMIUM, 'args': args},
            'goog:loggingPrefs': {'browser': 'ALL'}}}}
        try:
            self.session = self._call('POST', '/session', caps)['sessionId']
        except BrowserError:
            self.close()
            raise

    # ---- the protocol ----

    def _call(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={'Content-Type': 'application/json'})
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                payload = json.load(r)
        except urllib.error.HTTPError as e:
            try:
                v = json.load(e).get('value', {})
                msg = '%s: %s' % (v.get('error'), v.get('message', '').split('\n')[0])
            except ValueError:
                msg = str(e)
            raise BrowserError('%s %s: %s' % (method, path, msg)) from None
        return payload.get('value') if path != '/status' else payload['value']

    def _s(self, method, path, body=None):
        return self._call(method, '/session/%s%s' % (self.session, path), body)

    # ---- pages ----

    def get(self, url):
        self._s('POST', '/url', {'url': url})

    def script(self, js, *args):
        """The value of js run as a function body in the page (with arguments)."""
        return self._s('POST', '/execute/sync', {'script': js, 'args': list(args)})

    def wait(self, js, what, *args):
        """Waits until js (a function body) returns a true value; that value."""
        deadline = time.time() + self.timeout
        while True:
            v = self.script(js, *args)
            if v:
                return v
            if time.time() > deadline:
                self.keep('timed-out')   # what the page showed instead
                raise BrowserError('timed out waiting for %s on %s (the page as it was: %s/timed-out.png)'
                                   % (what, self.url(), self.artifacts))
            time.sleep(0.05)

    def wait_ready(self):
        """Waits until the page's script ended (site.js marks body data-ready)."""
        self.wait("return document.readyState === 'complete' && document.body && "
                  "document.body.dataset.ready === '1';", 'the page to be ready')

    def wait_for(self, css):
        self.wait('return document.querySelector(arguments[0]) !== null;', css, css)

    def url(self):
        return self._s('GET', '/url')

    def dom(self):
        """The document as it is now (after the scripts ran), as HTML."""
        return self.script('return document.documentElement.outerHTML;')

    def text(self, css):
        """The text of the first element css selects (None: none)."""
        return self.script('const e = document.querySelector(arguments[0]); return e ? e.textContent : null;', css)

    def texts(self, css):
        return self.script('return Array.from(document.querySelectorAll(arguments[0]), e => e.textContent);', css)

    def find(self, css):
        return self._s('POST', '/element', {'using': 'css selector', 'value': css})[ELEMENT]

    def click(self, css):
        self._s('POST', '/element/%s/click' % self.find(css), {})

    def fill(self, css, text):
        e = self.find(css)
        self._s('POST', '/element/%s/clear' % e, {})
        self._s('POST', '/element/%s/value' % e, {'text': text})

    def cookies(self):
        return self._s('GET', '/cookie')

    def add_cookie(self, cookie):
        self._s('POST', '/cookie', {'cookie': cookie})

    def delete_cookies(self):
        self._s('DELETE', '/cookie')

    def console(self):
        """The browser console's entries since the last call (CSP refusals show here)."""
        try:
            return self._s('POST', '/se/log', {'type': 'browser'})
        except BrowserError:
            return []

    def screenshot(self, name):
        path = os.path.join(self.artifacts, name + '.png')
        with open(path, 'wb') as f:
            f.write(base64.b64decode(self._s('GET', '/screenshot')))
        return path

    def keep(self, name):
        """Keeps the page as it is: NAME.png and NAME.html in the artifacts; returns the DOM."""
        self.screenshot(name)
        d = self.dom()
        with open(os.path.join(self.artifacts, name + '.html'), 'w') as f:
            f.write(d)
        return d

    def close(self):
        if self.session:
            try:
                self._s('DELETE', '')
            except (OSError, BrowserError):
                pass
            self.session = None
        if self.driver.poll() is None:
            self.driver.terminate()
            try:
                self.driver.wait(10)
            except subprocess.TimeoutExpired:
                self.driver.kill()
                self.driver.wait()
        self.log.close()
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def main(argv):
    if len(argv) < 4 or argv[1] != 'load':
        print(__doc__, file=sys.stderr)
        return 1
    url, name = argv[2], argv[3]
    artifacts = argv[4] if len(argv) > 4 else None
    try:
        with Browser(artifacts) as b:
            b.get(url)
            b.wait_ready()
            sys.stdout.write(b.keep(name) + '\n')
            for entry in b.console():
                if entry.get('level') == 'SEVERE':
                    print('console: ' + entry.get('message', ''), file=sys.stderr)
    except BrowserError as e:
        print('browser: %s' % e, file=sys.stderr)
        return 2 if 'missing' in str(e) else 1
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
