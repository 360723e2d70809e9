// cmd/clusterd-pki generates certificates and keys in its own short-lived process, so the API
// server never loads the certificate library. Two modes:
//   clusterd-pki --data-dir=DIR [--bind-address=IP]   a data directory's PKI (what ensurePki would)
//   clusterd-pki cluster                              a cluster PKI directory: a ClusterPkiRequest
//                                                     (JSON) on stdin, the ClusterPkiResult on stdout
// Exit 0 on success, 1 on failure (message on stderr), 2 on bad flags.

import { generatePki } from '../../internal/pki/pki.js';
import { writeClusterPki, type ClusterPkiRequest } from '../../internal/pki/cluster-pki.js';

const fail = (e: unknown): never => {
  process.stderr.write(`clusterd-pki: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
};

async function cluster(): Promise<void> {
  let input = '';
  for await (const chunk of process.stdin) input += String(chunk);
  const request = JSON.parse(input) as ClusterPkiRequest;
  process.stdout.write(JSON.stringify(await writeClusterPki(request)));
}

function dataDir(): void {
  const args = new Map(
    process.argv.slice(2).map((a) => {
      const m = /^--([a-z-]+)=(.*)$/.exec(a);
      if (!m) {
        process.stderr.write(`clusterd-pki: unexpected argument ${a}\n\n${USAGE}`);
        process.exit(2);
      }
      return [m[1]!, m[2]!] as const;
    }),
  );
  const unknown = [...args.keys()].find((k) => k !== 'data-dir' && k !== 'bind-address');
  if (unknown !== undefined) {
    process.stderr.write(`clusterd-pki: unknown flag --${unknown}\n\n${USAGE}`);
    process.exit(2);
  }
  const dir = args.get('data-dir');
  if (!dir) {
    process.stderr.write('clusterd-pki: --data-dir is required\n');
    process.exit(2);
  }
  generatePki(dir, args.get('bind-address') ?? '0.0.0.0').catch(fail);
}

const USAGE = `usage: clusterd-pki --data-dir=DIR [--bind-address=IP]
       clusterd-pki cluster < request.json > result.json

The server runs this helper itself; run by hand it writes the same files.

  --data-dir=DIR       the data directory whose PKI (CA, serving and admin certificates, the
                       service-account key pair, admin.kubeconfig) is created if missing
  --bind-address=IP    the address the serving certificate names besides localhost (default 0.0.0.0)
  cluster              read a cluster PKI request (JSON) on stdin and write the cluster PKI
                       directory it describes; the result (JSON) goes to stdout
  --help               this text
`;

if (process.argv[2] === '--help' || process.argv[2] === '-h') process.stdout.write(USAGE);
else if (process.argv[2] === 'cluster' && process.argv.length === 3) cluster().catch(fail);
else dataDir();
