/** A throwaway self-signed certificate for a test's HTTPS server, made by openssl. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function selfSignedCert(commonName: string): { key: Buffer; cert: Buffer } {
    const dir = mkdtempSync(join(tmpdir(), 'dragnet-cert-'));
    try {
        const [keyFile, certFile] = [join(dir, 'key.pem'), join(dir, 'cert.pem')];
        const subject = `/CN=${commonName}`;
        const args = ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', subject, '-days', '1'];
        execFileSync('openssl', [...args, '-keyout', keyFile, '-out', certFile], { stdio: 'ignore' });
        return { key: readFileSync(keyFile), cert: readFileSync(certFile) };
    } finally {
        rmSync(dir, { recursive: true, force: true });
    }
}
