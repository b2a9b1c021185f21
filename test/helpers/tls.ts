// A throwaway self-signed certificate for 127.0.0.1: made with openssl when it is installed, else
// assembled here (a minimal X.509 v3, ECDSA P-256) with node:crypto, so TLS tests always run.
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes, sign, X509Certificate } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface TestCert {
  certFile: string;
  keyFile: string;
  cert: string;
}

export function selfSignedCert(dir: string, via: 'openssl' | 'node' = hasOpenssl() ? 'openssl' : 'node'): TestCert {
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  if (via === 'openssl') {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-days', '1', '-keyout', keyFile, '-out', certFile], { stdio: 'ignore' });
  } else {
    const { cert, key } = nodeSelfSigned();
    writeFileSync(certFile, cert);
    writeFileSync(keyFile, key, { mode: 0o600 });
  }
  const cert = readFileSync(certFile, 'utf8');
  new X509Certificate(cert); // fails loudly if the certificate is malformed
  return { certFile, keyFile, cert };
}

function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

// ------------------------------------------------------------------ minimal DER

function der(tag: number, content: Buffer): Buffer {
  const n = content.length;
  const len = n < 0x80 ? Buffer.from([n]) : n < 0x100 ? Buffer.from([0x81, n]) : Buffer.from([0x82, n >> 8, n & 0xff]);
  return Buffer.concat([Buffer.from([tag]), len, content]);
}
const seq = (...parts: Buffer[]) => der(0x30, Buffer.concat(parts));
const oid = (dotted: string) => {
  const [a, b, ...rest] = dotted.split('.').map(Number);
  const bytes = [a! * 40 + b!];
  for (const v of rest) {
    const chunk = [v & 0x7f];
    for (let x = v >> 7; x > 0; x >>= 7) chunk.unshift((x & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return der(0x06, Buffer.from(bytes));
};
const utcTime = (d: Date) => der(0x17, Buffer.from(`${d.toISOString().slice(2, 19).replace(/[-T:]/g, '')}Z`));

function nodeSelfSigned(): { cert: string; key: string } {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const ecdsaSha256 = seq(oid('1.2.840.10045.4.3.2'));
  const name = seq(der(0x31, seq(oid('2.5.4.3'), der(0x0c, Buffer.from('127.0.0.1')))));
  const now = Date.now();
  const sanIp = der(0x87, Buffer.from([127, 0, 0, 1]));
  const serial = randomBytes(8);
  serial[0] = (serial[0]! & 0x7f) | 0x01; // positive, no leading zero byte needed
  const extensions = der(0xa3, seq(seq(oid('2.5.29.17'), der(0x04, seq(sanIp)))));
  const tbs = seq(
    der(0xa0, der(0x02, Buffer.from([2]))),
    der(0x02, serial),
    ecdsaSha256,
    name,
    seq(utcTime(new Date(now - 60_000)), utcTime(new Date(now + 86_400_000))),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    extensions,
  );
  const signature = sign('sha256', tbs, { key: privateKey, dsaEncoding: 'der' });
  const cert = seq(tbs, ecdsaSha256, der(0x03, Buffer.concat([Buffer.from([0]), signature])));
  const pem = `-----BEGIN CERTIFICATE-----\n${cert.toString('base64').replace(/(.{64})/g, '$1\n')}\n-----END CERTIFICATE-----\n`;
  return { cert: pem.replace(/\n\n/g, '\n'), key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}
