"""scripts/soak: many clients on a mixed load against a real daemon, for minutes; RSS and open
descriptors sampled every minute. Exit 1 on any error, or when RSS or descriptors grow more than
10 % from the first minute to the last."""
import argparse, base64, json, os, random, shutil, signal, socket, subprocess, sys, tempfile, threading, time

def call(sock, method, parameters):
    sock.sendall(json.dumps({"method": method, "parameters": parameters}).encode() + b"\0")
    data = b""
    while not data.endswith(b"\0"):
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("the daemon closed the connection")
        data += chunk
    reply = json.loads(data[:-1])
    if "error" in reply:
        raise RuntimeError(f"{method}: {reply['error']} {reply.get('parameters')}")
    return reply.get("parameters", {})

def connect(path):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    # Blocking connect: with a timeout set, Python's connect is non-blocking and a full listen backlog
    # gives EAGAIN at once instead of waiting for the daemon to accept, as blocking clients do.
    sock.connect(path)
    sock.settimeout(60)
    return sock

class Client(threading.Thread):
    def __init__(self, number, path, stop, persistent):
        super().__init__(daemon=True)
        self.number, self.path, self.stop, self.persistent = number, path, stop, persistent
        self.ops = 0
        self.errors = []
        self.stored = {}

    def run(self):
        sock = None
        try:
            sock = connect(self.path) if self.persistent else None
        except OSError as error:
            self.errors.append(f"first connect: {error!r}")
        service = f"soak.c{self.number}"
        while not self.stop.is_set():
            try:
                s = sock or connect(self.path)
                choice = random.random()
                account = f"a{random.randrange(8)}"
                if choice < 0.35 or not self.stored:
                    secret = os.urandom(random.randrange(16, 2048))
                    call(s, "org.sortedvault.vault.Store", {"service": service, "account": account,
                                                           "secret": base64.b64encode(secret).decode()})
                    self.stored[account] = secret
                elif choice < 0.75:
                    account = random.choice(list(self.stored))
                    got = base64.b64decode(call(s, "org.sortedvault.vault.Retrieve", {"service": service, "account": account})["secret"])
                    if got != self.stored[account]:
                        self.errors.append(f"{service}/{account}: retrieve gave other bytes")
                elif choice < 0.85:
                    items = call(s, "org.sortedvault.vault.List", {"service": service})["items"]
                    if {i["account"] for i in items} != set(self.stored):
                        self.errors.append(f"{service}: list disagrees")
                elif choice < 0.95:
                    call(s, "org.sortedvault.vault.Status", {})
                else:
                    account = random.choice(list(self.stored))
                    call(s, "org.sortedvault.vault.Delete", {"service": service, "account": account})
                    del self.stored[account]
                self.ops += 1
                if not sock:
                    s.close()
            except Exception as error:  # every failure is an error of the run
                self.errors.append(repr(error))
                if sock:
                    try: sock.close()
                    except OSError: pass
                    try: sock = connect(self.path)
                    except OSError as again: self.errors.append(f"reconnect: {again!r}")

def sample(pid):
    rss = 0
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
    return rss, len(os.listdir(f"/proc/{pid}/fd"))

def main():
    parser = argparse.ArgumentParser(prog="scripts/soak", description=__doc__)
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--minutes", type=int, default=10)
    parser.add_argument("--build-dir", default=".build/debug")
    args = parser.parse_args()
    binary = os.path.join(args.build_dir, "sortedvault")
    root = tempfile.mkdtemp(prefix="sv-soak-")
    os.chmod(root, 0o700)
    env = dict(os.environ, HOME=root + "/home", XDG_RUNTIME_DIR=root + "/run", XDG_DATA_HOME=root + "/data",
               XDG_CONFIG_HOME=root + "/config", XDG_STATE_HOME=root + "/state")
    for d in ("home", "run", "data", "config/sortedvault/policy", "state"):
        os.makedirs(os.path.join(root, d), mode=0o700, exist_ok=True)
    shutil.copy("policy/access.toml", root + "/config/sortedvault/policy/access.toml")
    with open(root + "/config/sortedvault/policy/settings.toml", "w") as settings:
        # One program, one uid, many clients: the limits are raised for the load, as for a busy host.
        settings.write("max_connections_per_uid = 1024\nmax_connections_per_process = 512\nmax_connections_per_executable = 1024\n")
    subprocess.run([binary, "init", "--key-source", "keyfile"], env=env, check=True, stdout=subprocess.DEVNULL)
    log = open(root + "/daemon.log", "w")
    daemon = subprocess.Popen([binary, "daemon"], env=env, stdout=log, stderr=log)
    path = root + "/run/sortedvault/socket"
    for _ in range(500):
        if os.path.exists(path):
            break
        time.sleep(0.01)
    stop = threading.Event()
    clients = [Client(n, path, stop, persistent=n % 2 == 0) for n in range(args.clients)]
    for client in clients:
        client.start()
    samples = []
    print(f"soak: {args.clients} clients (half persistent connections, half one per request) for {args.minutes} min, daemon pid {daemon.pid}")
    print("minute  RSS KiB  fds  ops so far  errors so far")
    for minute in range(1, args.minutes + 1):
        time.sleep(60)
        rss, fds = sample(daemon.pid)
        samples.append((rss, fds))
        print(f"{minute:6d}  {rss:7d}  {fds:3d}  {sum(c.ops for c in clients):10d}  {sum(len(c.errors) for c in clients):13d}", flush=True)
    stop.set()
    for client in clients:
        client.join(timeout=120)
    daemon.send_signal(signal.SIGTERM)
    status = daemon.wait(timeout=30)
    errors = [e for c in clients for e in c.errors]
    ops = sum(c.ops for c in clients)
    (rss0, fd0), (rss1, fd1) = samples[0], samples[-1]
    rss_growth = (rss1 - rss0) / rss0 * 100
    fd_growth = (fd1 - fd0) / fd0 * 100
    print(f"ops {ops} ({ops / (args.minutes * 60):.0f}/s), errors {len(errors)}, daemon exit {status}")
    print(f"RSS first minute {rss0} KiB, last {rss1} KiB ({rss_growth:+.1f} %); descriptors {fd0} -> {fd1} ({fd_growth:+.1f} %)")
    for error in errors[:10]:
        print("error:", error)
    shutil.rmtree(root, ignore_errors=True)
    sys.exit(0 if not errors and status == 0 and rss_growth <= 10 and fd_growth <= 10 else 1)

main()
