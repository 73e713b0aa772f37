"""HTTP transport rules: redirects (at most 5), proxy environment, TLS always verified."""
import http.server
import ssl
import subprocess
import threading

import pytest

from conftest import POSTS


def test_redirects_are_followed_up_to_five(server, setup):
    server.set_records("final", POSTS)
    for i in range(5):
        server.fault(f"hop{i}", kind="redirect", to=f"/hop{i + 1}" if i < 4 else "/final")
    setup.add_source("posts", server.url("hop0"))
    r = setup.syncd("--once")
    assert r.returncode == 0, r.stderr
    assert setup.cache_doc("posts")["records"] == POSTS


def test_a_sixth_redirect_is_refused(server, setup):
    server.set_records("final", POSTS)
    for i in range(6):
        server.fault(f"hop{i}", kind="redirect", to=f"/hop{i + 1}" if i < 5 else "/final")
    setup.add_source("posts", server.url("hop0"))
    r = setup.syncd("--once")
    assert r.returncode == 1
    assert "Maximum (5) redirects followed" in r.stderr
    assert not setup.cache_file("posts").exists()


def test_proxy_environment_is_honoured(server, setup):
    server.set_records("posts", POSTS)
    # .invalid never resolves (RFC 6761): the request can only succeed through the proxy.
    setup.add_source("posts", "http://syncd-test.invalid/posts")
    r = setup.syncd("--once", env={"http_proxy": server.base, "no_proxy": ""})
    assert r.returncode == 0, r.stderr
    assert server.requests()[0]["path"] == "http://syncd-test.invalid/posts"
    assert setup.cache_doc("posts")["records"] == POSTS


@pytest.fixture
def self_signed_https(tmp_path):
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-subj", "/CN=localhost", "-days", "1", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                   check=True, capture_output=True)
    body = b'[{"id":1}]'

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    httpd = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"https://127.0.0.1:{httpd.server_address[1]}/posts", cert
    httpd.shutdown()


def test_tls_certificates_are_verified(self_signed_https, setup):
    url, cert = self_signed_https
    setup.add_source("posts", url)
    r = setup.syncd("--once")
    assert r.returncode == 1
    assert "TLS verification failed for https://127.0.0.1:" in r.stderr
    assert "SSL certificate problem: self-signed certificate" in r.stderr
    assert not setup.cache_file("posts").exists()
