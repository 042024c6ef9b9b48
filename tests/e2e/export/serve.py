# A quiet static HTTP server on 127.0.0.1 for export.sh's speedscope test:
# speedscope loads '#profileURL=' only over http(s).
#   python3 serve.py DIR PORTFILE   (writes the port it got into PORTFILE)
import functools, http.server, os, socketserver, sys


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


server = socketserver.TCPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=sys.argv[1]))
with open(sys.argv[2] + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
server.serve_forever()
