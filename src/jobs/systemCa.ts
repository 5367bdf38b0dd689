// The operating system's trusted CA certificates (VS Code's http.systemCertificates), for endpoints
// behind a company CA that the OS trusts and Node does not. Node 20 cannot read the OS store itself
// (no tls.getCACertificates('system')): on Linux the distribution's bundle file is read, on macOS the
// keychains through `security`; the Windows store is not read (said in `note`). Only the certificates
// Node's own roots lack are returned: on most machines that is a handful, or none.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { rootCertificates } from 'node:tls';

/** The bundle files of the common distributions, in Go's crypto/x509 order (root_linux.go). */
export const LINUX_CA_BUNDLES: readonly string[] = [
  '/etc/ssl/certs/ca-certificates.crt', // Debian, Ubuntu, Gentoo, Arch
  '/etc/pki/tls/certs/ca-bundle.crt', // Fedora, RHEL 6
  '/etc/ssl/ca-bundle.pem', // openSUSE
  '/etc/pki/tls/cacert.pem', // OpenELEC
  '/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem', // CentOS, RHEL 7
  '/etc/ssl/cert.pem', // Alpine
];

/** The keychains read on macOS: the system roots and the admin-installed ones (a company CA lands there), then the user's search list. */
export const MAC_KEYCHAINS: readonly string[] = ['/System/Library/Keychains/SystemRootCertificates.keychain', '/Library/Keychains/System.keychain'];

export interface SystemCa {
  /** PEM certificates of the OS store that Node's bundled roots do not hold. */
  readonly ca: readonly string[];
  /** How many certificates the OS store held in all. */
  readonly total: number;
  /** Where they were read: a file, "keychain", or undefined when nothing was read. */
  readonly from?: string;
  /** Why nothing was read (Windows, no bundle found, `security` failed). */
  readonly note?: string;
}

/** What the loader touches, replaceable in tests. */
export interface SystemCaDeps {
  readonly platform: NodeJS.Platform;
  readFile(path: string): Promise<string>;
  /** Runs a command; resolves to its stdout. */
  run(file: string, args: readonly string[]): Promise<string>;
  readonly roots: readonly string[];
}

const PEM = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** A certificate's identity for comparison: its base64 body, without the armour and line breaks. */
function body(pem: string): string {
  return pem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '');
}

/** The certificates of `pems` not already among `roots`, each once. */
export function beyondRoots(pems: readonly string[], roots: readonly string[]): string[] {
  const seen = new Set(roots.map(body));
  const out: string[] = [];
  for (const p of pems) {
    const b = body(p);
    if (seen.has(b)) continue;
    seen.add(b);
    out.push(p);
  }
  return out;
}

const defaults: SystemCaDeps = {
  platform: process.platform,
  readFile: (path) => readFile(path, 'utf8'),
  run: (file, args) =>
    new Promise((resolve, reject) => {
      execFile(file, [...args], { maxBuffer: 64 * 1024 * 1024, timeout: 10_000 }, (err, stdout) => (err ? reject(err) : resolve(stdout)));
    }),
  roots: rootCertificates,
};

async function readStore(deps: SystemCaDeps): Promise<{ pems: string[]; from?: string; note?: string }> {
  switch (deps.platform) {
    case 'linux':
    case 'freebsd':
    case 'openbsd':
    case 'netbsd': {
      const files = deps.platform === 'linux' ? LINUX_CA_BUNDLES : ['/usr/local/etc/ssl/cert.pem', '/etc/ssl/cert.pem', ...LINUX_CA_BUNDLES];
      for (const file of files) {
        let text: string;
        try {
          text = await deps.readFile(file);
        } catch {
          continue;
        }
        const pems = text.match(PEM);
        if (pems) return { pems, from: file };
      }
      return { pems: [], note: `no CA bundle found (looked for ${files.join(', ')})` };
    }
    case 'darwin': {
      const pems: string[] = [];
      const problems: string[] = [];
      // The system keychains, then the user's search list (login keychain included).
      for (const args of [['find-certificate', '-a', '-p', ...MAC_KEYCHAINS], ['find-certificate', '-a', '-p']]) {
        try {
          pems.push(...((await deps.run('/usr/bin/security', args)).match(PEM) ?? []));
        } catch (err) {
          problems.push((err as Error).message.split('\n')[0]!);
        }
      }
      if (pems.length === 0) return { pems, note: `the keychains could not be read (security find-certificate: ${problems.join('; ') || 'no certificate'})` };
      return { pems, from: 'keychain' };
    }
    case 'win32':
      return { pems: [], note: 'the Windows certificate store is not read: export your CA to a PEM file and set llmProfiler.tls.caFile' };
    default:
      return { pems: [], note: `the certificate store of ${deps.platform} is not read: set llmProfiler.tls.caFile` };
  }
}

/** Reads the OS store (never throws: a problem is in `note`). */
export async function readSystemCa(deps: SystemCaDeps = defaults): Promise<SystemCa> {
  const { pems, from, note } = await readStore(deps);
  return { ca: beyondRoots(pems, deps.roots), total: pems.length, ...(from !== undefined ? { from } : {}), ...(note !== undefined ? { note } : {}) };
}

let cached: Promise<SystemCa> | undefined;

/** The OS store, read once per process (the first https:// endpoint pays for it; later ones do not). */
export function systemCa(): Promise<SystemCa> {
  cached ??= readSystemCa();
  return cached;
}
