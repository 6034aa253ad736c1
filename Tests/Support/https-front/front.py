"""A TLS-terminating front for the tests' providers: accepts TLS on 127.0.0.1 with a certificate
it makes itself, and pipes each connection's plaintext to a provider's plain-HTTP port.

    front.py --state-dir DIR --certificate valid --backend-port 8123

It writes DIR/ca.pem (the test CA, to be trusted by the client under test) and DIR/port once it
listens. With --http2 it offers only h2 by ALPN and speaks HTTP/2 itself (the `h2` library), passing
each request on to the provider as HTTP/1.1 and appending "h2 METHOD PATH" to DIR/requests.
--certificate chooses what it presents:
  valid        signed by the test CA, naming 127.0.0.1 and localhost
  wrong-host   signed by the test CA, naming only other.example
  expired      signed by the test CA, valid until yesterday
  self-signed  signed by its own key (not the CA), naming 127.0.0.1
  unknown-ca   signed by a second CA the client does not trust, naming 127.0.0.1
"""
import argparse
import asyncio
import datetime
import http.client
import ipaddress
import os
import ssl

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def name(common_name):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def make_ca(common_name, now):
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder()
            .subject_name(name(common_name)).issuer_name(name(common_name))
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
                                         key_encipherment=False, data_encipherment=False, key_agreement=False,
                                         encipher_only=False, decipher_only=False), critical=True)
            .sign(key, hashes.SHA256()))
    return key, cert


def make_leaf(issuer_key, issuer_name, subject, names, not_before, not_after, key=None):
    key = key or ec.generate_private_key(ec.SECP256R1())
    alternative = []
    for entry in names:
        try:
            alternative.append(x509.IPAddress(ipaddress.ip_address(entry)))
        except ValueError:
            alternative.append(x509.DNSName(entry))
    cert = (x509.CertificateBuilder()
            .subject_name(name(subject)).issuer_name(issuer_name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(not_before).not_valid_after(not_after)
            .add_extension(x509.SubjectAlternativeName(alternative), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .sign(issuer_key if issuer_key is not None else key, hashes.SHA256()))
    return key, cert


def certificates(kind, now):
    ca_key, ca = make_ca("sortedvault test CA", now)
    day = datetime.timedelta(days=1)
    loopback = ["127.0.0.1", "localhost"]
    if kind == "valid":
        key, cert = make_leaf(ca_key, ca.subject, "127.0.0.1", loopback, now - day, now + 30 * day)
    elif kind == "wrong-host":
        key, cert = make_leaf(ca_key, ca.subject, "other.example", ["other.example"], now - day, now + 30 * day)
    elif kind == "expired":
        key, cert = make_leaf(ca_key, ca.subject, "127.0.0.1", loopback, now - 30 * day, now - day)
    elif kind == "self-signed":
        own = ec.generate_private_key(ec.SECP256R1())
        key, cert = make_leaf(None, name("127.0.0.1"), "127.0.0.1", loopback, now - day, now + 30 * day, key=own)
    elif kind == "unknown-ca":
        other_key, other = make_ca("a CA nobody trusts", now)
        key, cert = make_leaf(other_key, other.subject, "127.0.0.1", loopback, now - day, now + 30 * day)
    else:
        raise SystemExit(f"unknown --certificate {kind}")
    return ca, key, cert


async def pipe(reader, writer):
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, ssl.SSLError):
        pass
    finally:
        try:
            writer.close()
        except Exception:
            pass


def forward(port, method, path, headers, body):
    """One request to the provider as HTTP/1.1; its status, headers and body."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        return response.status, response.getheaders(), response.read()
    finally:
        connection.close()


async def serve_http2(client_reader, client_writer, backend_port, state):
    import h2.config
    import h2.connection
    import h2.events
    connection = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
    connection.initiate_connection()
    client_writer.write(connection.data_to_send())
    requests = {}
    try:
        while data := await client_reader.read(65536):
            for event in connection.receive_data(data):
                if isinstance(event, h2.events.RequestReceived):
                    requests[event.stream_id] = (dict(event.headers), bytearray())
                elif isinstance(event, h2.events.DataReceived):
                    requests[event.stream_id][1].extend(event.data)
                    connection.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                elif isinstance(event, h2.events.StreamEnded):
                    pseudo, body = requests.pop(event.stream_id)
                    method, path = pseudo[":method"], pseudo[":path"]
                    headers = {name: value for name, value in pseudo.items() if not name.startswith(":")}
                    headers["Host"] = pseudo.get(":authority", "127.0.0.1")
                    with open(os.path.join(state, "requests"), "a") as log:
                        log.write(f"h2 {method} {path}\n")
                    status, answer_headers, answer = await asyncio.to_thread(forward, backend_port, method, path, headers, bytes(body))
                    skip = {"connection", "transfer-encoding", "keep-alive", "content-length"}
                    reply = [(":status", str(status))] + [(name.lower(), value) for name, value in answer_headers if name.lower() not in skip]
                    reply.append(("content-length", str(len(answer))))
                    connection.send_headers(event.stream_id, reply)
                    connection.send_data(event.stream_id, answer, end_stream=True)
            client_writer.write(connection.data_to_send())
            await client_writer.drain()
    except (ConnectionError, ssl.SSLError):
        pass
    finally:
        client_writer.close()


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--state-dir", required=True)
    parser.add_argument("--certificate", default="valid")
    parser.add_argument("--backend-port", type=int, required=True)
    parser.add_argument("--http2", action="store_true")
    arguments = parser.parse_args()
    now = datetime.datetime.now(datetime.timezone.utc)
    ca, key, cert = certificates(arguments.certificate, now)
    state = arguments.state_dir
    with open(os.path.join(state, "ca.pem"), "wb") as file:
        file.write(ca.public_bytes(serialization.Encoding.PEM))
    with open(os.path.join(state, "server.pem"), "wb") as file:
        file.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(os.path.join(state, "server.key"), "wb") as file:
        file.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                     serialization.NoEncryption()))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(os.path.join(state, "server.pem"), os.path.join(state, "server.key"))
    context.set_alpn_protocols(["h2"] if arguments.http2 else ["http/1.1"])

    async def serve(client_reader, client_writer):
        if arguments.http2:
            await serve_http2(client_reader, client_writer, arguments.backend_port, state)
            return
        try:
            backend_reader, backend_writer = await asyncio.open_connection("127.0.0.1", arguments.backend_port)
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(pipe(client_reader, backend_writer), pipe(backend_reader, client_writer))

    server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=context)
    port = server.sockets[0].getsockname()[1]
    with open(os.path.join(state, "port.tmp"), "w") as file:
        file.write(str(port))
    os.rename(os.path.join(state, "port.tmp"), os.path.join(state, "port"))
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
