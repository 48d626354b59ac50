/**
 * The id_token of the authorization-code flow: a JWT (RFC 7519) signed with ES256 (RFC 7518
 * §3.4) by a P-256 key the gateway creates on first start and keeps in its data directory. The
 * public half is served as a JWK Set at /oauth2/jwks; `kid` is its RFC 7638 thumbprint. Node's
 * crypto does all of it: no JOSE library is needed for one algorithm and one key.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export interface IdTokenClaims {
  iss: string;
  sub: string;
  aud: string;
  iat: number;
  exp: number;
  auth_time: number;
  nonce?: string;
  /** the site this gateway serves */
  site_id: string;
}

/** An EC public key as a JWK (RFC 7518 §6.2.1) with its id and use. */
export interface PublicJwk {
  kty: string;
  crv: string;
  x: string;
  y: string;
  kid: string;
  use: 'sig';
  alg: 'ES256';
}

const b64url = (v: string | Buffer): string => Buffer.from(v).toString('base64url');

/** RFC 7638: SHA-256 over the required members in lexicographic order. */
function thumbprint(jwk: { crv?: string; kty?: string; x?: string; y?: string }): string {
  const canonical = JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y });
  return createHash('sha256').update(canonical).digest('base64url');
}

export class IdTokenSigner {
  readonly jwk: PublicJwk;

  private constructor(private readonly key: KeyObject) {
    const pub = createPublicKey(key).export({ format: 'jwk' });
    this.jwk = {
      kty: String(pub.kty),
      crv: String(pub.crv),
      x: String(pub.x),
      y: String(pub.y),
      kid: thumbprint(pub),
      use: 'sig',
      alg: 'ES256',
    };
  }

  /** Loads the key from `file`, creating it (mode 0600) when it does not exist yet. */
  static loadOrCreate(file: string): IdTokenSigner {
    if (!existsSync(file)) {
      const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
      writeFileSync(file, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600, flag: 'wx' });
    }
    const key = createPrivateKey(readFileSync(file));
    if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
      throw new Error(`${file} is not a P-256 private key; move it away and sitegw creates a new one`);
    }
    return new IdTokenSigner(key);
  }

  sign(claims: IdTokenClaims): string {
    const header = b64url(JSON.stringify({ alg: 'ES256', typ: 'JWT', kid: this.jwk.kid }));
    const payload = b64url(JSON.stringify(claims));
    // JWS wants the raw r||s signature, not DER (RFC 7518 §3.4)
    const sig = sign('sha256', Buffer.from(`${header}.${payload}`), { key: this.key, dsaEncoding: 'ieee-p1363' });
    return `${header}.${payload}.${sig.toString('base64url')}`;
  }
}
