// Certificates made for a test with the system's openssl: a private CA, a server certificate it
// signs for 127.0.0.1 and localhost, one for another host name only, and one already expired. Nothing
// here is trusted by Node's own roots, so an https:// test server using them is a real private-CA
// endpoint.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCerts {
  readonly dir: string;
  /** The CA's certificate (PEM) and its file. */
  readonly ca: string;
  readonly caFile: string;
  /** Signed by the CA for IP 127.0.0.1 and DNS localhost. */
  readonly server: { readonly cert: string; readonly key: string };
  /** Signed by the CA for DNS other.test only. */
  readonly wrongHost: { readonly cert: string; readonly key: string };
  /** Signed by the CA for 127.0.0.1, valid until yesterday. */
  readonly expired: { readonly cert: string; readonly key: string };
  remove(): void;
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

function leaf(dir: string, name: string, san: string, days: string): { cert: string; key: string } {
  openssl(dir, ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`]);
  writeFileSync(join(dir, `${name}.ext`), `subjectAltName=${san}\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n`);
  openssl(dir, ['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${name}.pem`, '-days', days, '-extfile', `${name}.ext`]);
  return { cert: readFileSync(join(dir, `${name}.pem`), 'utf8'), key: readFileSync(join(dir, `${name}.key`), 'utf8') };
}

export function makeTestCerts(): TestCerts {
  const dir = mkdtempSync(join(tmpdir(), 'llmp-certs-'));
  openssl(dir, ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=LLM Profiler Test CA']);
  return {
    dir,
    ca: readFileSync(join(dir, 'ca.pem'), 'utf8'),
    caFile: join(dir, 'ca.pem'),
    server: leaf(dir, 'server', 'IP:127.0.0.1,DNS:localhost', '2'),
    wrongHost: leaf(dir, 'wronghost', 'DNS:other.test', '2'),
    // -days -1: valid from now until a day ago, i.e. expired.
    expired: leaf(dir, 'expired', 'IP:127.0.0.1,DNS:localhost', '-1'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
