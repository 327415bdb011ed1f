import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { CompactSign, importPKCS8 } from 'jose';
import { tempDir } from './temp-dir.js';

/**
 * A test certificate chain shaped like Apple's (root → intermediate with Apple's WWDR marker
 * extension → leaf with the App Store receipt-signing marker), made with openssl, and JWS
 * signed by its leaf: what SignedDataVerifier checks, with a root the test configures.
 */
export interface AppleTestChain {
  rootPath: string;
  sign(payload: Record<string, unknown>): Promise<string>;
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

function der(dir: string, pem: string): string {
  return fs
    .readFileSync(path.join(dir, pem), 'utf8')
    .replace(/-----(BEGIN|END) CERTIFICATE-----/g, '')
    .replace(/\s+/g, '');
}

export function makeAppleTestChain(): AppleTestChain {
  const dir = tempDir('apple-chain');
  fs.writeFileSync(path.join(dir, 'ca.ext'), 'basicConstraints=critical,CA:true\nkeyUsage=critical,keyCertSign,cRLSign\n');
  fs.writeFileSync(
    path.join(dir, 'intermediate.ext'),
    'basicConstraints=critical,CA:true,pathlen:0\nkeyUsage=critical,keyCertSign,cRLSign\n1.2.840.113635.100.6.2.1=ASN1:NULL\n',
  );
  fs.writeFileSync(path.join(dir, 'leaf.ext'), 'basicConstraints=critical,CA:false\nkeyUsage=critical,digitalSignature\n1.2.840.113635.100.6.11.1=ASN1:NULL\n');
  for (const name of ['root', 'intermediate', 'leaf']) {
    openssl(dir, ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', `${name}.key`]);
  }
  openssl(dir, [
    'req',
    '-x509',
    '-new',
    '-key',
    'root.key',
    '-subj',
    '/CN=Test Apple Root CA',
    '-days',
    '30',
    '-sha256',
    '-extensions',
    'v3_ca',
    '-addext',
    'basicConstraints=critical,CA:true',
    '-out',
    'root.pem',
  ]);
  openssl(dir, ['req', '-new', '-key', 'intermediate.key', '-subj', '/CN=Test Apple WWDR', '-out', 'intermediate.csr']);
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    'intermediate.csr',
    '-CA',
    'root.pem',
    '-CAkey',
    'root.key',
    '-CAcreateserial',
    '-days',
    '30',
    '-sha256',
    '-extfile',
    'intermediate.ext',
    '-out',
    'intermediate.pem',
  ]);
  openssl(dir, ['req', '-new', '-key', 'leaf.key', '-subj', '/CN=Test App Store signing', '-out', 'leaf.csr']);
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    'leaf.csr',
    '-CA',
    'intermediate.pem',
    '-CAkey',
    'intermediate.key',
    '-CAcreateserial',
    '-days',
    '30',
    '-sha256',
    '-extfile',
    'leaf.ext',
    '-out',
    'leaf.pem',
  ]);
  const x5c = [der(dir, 'leaf.pem'), der(dir, 'intermediate.pem'), der(dir, 'root.pem')];
  const keyPem = fs.readFileSync(path.join(dir, 'leaf.key'), 'utf8');
  return {
    rootPath: path.join(dir, 'root.pem'),
    async sign(payload) {
      const key = await importPKCS8(keyPem, 'ES256');
      return new CompactSign(new TextEncoder().encode(JSON.stringify(payload))).setProtectedHeader({ alg: 'ES256', x5c }).sign(key);
    },
  };
}

export const BUNDLE_ID = 'com.example.referrals';

export function appleTransaction(
  fields: {
    transactionId: string;
    originalTransactionId: string;
    appAccountToken?: string;
    price?: number;
    offerDiscountType?: string;
    inAppOwnershipType?: string;
  },
  bundleId = BUNDLE_ID,
) {
  const now = Date.now();
  return {
    transactionId: fields.transactionId,
    originalTransactionId: fields.originalTransactionId,
    bundleId,
    productId: 'premium.monthly',
    subscriptionGroupIdentifier: '21000000',
    purchaseDate: now,
    originalPurchaseDate: now,
    expiresDate: now + 30 * 86_400_000,
    quantity: 1,
    type: 'Auto-Renewable Subscription',
    inAppOwnershipType: fields.inAppOwnershipType ?? 'PURCHASED',
    signedDate: now,
    environment: 'Sandbox',
    transactionReason: 'PURCHASE',
    storefront: 'USA',
    storefrontId: '143441',
    price: fields.price ?? 9990,
    currency: 'USD',
    ...(fields.appAccountToken ? { appAccountToken: fields.appAccountToken } : {}),
    ...(fields.offerDiscountType ? { offerDiscountType: fields.offerDiscountType, offerType: 1 } : {}),
  };
}

export async function appleNotification(
  chain: AppleTestChain,
  type: string,
  transaction: Record<string, unknown>,
  options: { uuid?: string; subtype?: string; bundleId?: string; environment?: 'Sandbox' | 'Production'; appAppleId?: number } = {},
) {
  const bundleId = options.bundleId ?? BUNDLE_ID;
  return {
    signedPayload: await chain.sign({
      notificationType: type,
      ...(options.subtype ? { subtype: options.subtype } : {}),
      notificationUUID: options.uuid ?? randomUUID(),
      version: '2.0',
      signedDate: Date.now(),
      data: {
        bundleId,
        ...(options.appAppleId === undefined ? {} : { appAppleId: options.appAppleId }),
        environment: options.environment ?? 'Sandbox',
        status: 1,
        signedTransactionInfo: await chain.sign({ ...transaction, bundleId, environment: options.environment ?? 'Sandbox' }),
      },
    }),
  };
}
