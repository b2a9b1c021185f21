// Builds the authenticator from the configuration: reads the token map and key files through the
// runtime's `readText` and hands their text to the portable parsers. The token map reloads on
// demand (SIGHUP).
import { ConfigError, type Config } from '../core/config.ts';
import type { Clock } from '../ports/clock.ts';
import type { Logger } from '../ports/logger.ts';
import { CompositeAuthenticator, NO_AUTH, type Authenticator } from './authenticator.ts';
import { setUpDevToken, type DevTokenFile } from './dev-token.ts';
import { createJwtAuthenticator, JwtConfigError, type JwtSettings } from './jwt.ts';
import { securityProblems, securityWarnings } from './startup-policy.ts';
import { parseTokenMap, TokenMapAuthenticator, TokenMapError, type TokenEntry } from './token-map.ts';

/** Reads a whole UTF-8 file now (the runtime's own call); throws its error (with `code`, e.g. ENOENT). */
export type ReadText = (file: string) => string;

export interface AuthSetup {
  auth: Authenticator;
  /** The dev token made at this start, to print once (null when auth is off, tokens come from config, or the stored one is kept). */
  devToken: string | null;
  /** True when the dev token of an earlier start is kept (PTY_WS_DEV_TOKEN_POLICY=keep): nothing to print. */
  devTokenKept: boolean;
  /** Re-reads PTY_WS_TOKENS_FILE; a broken file keeps the old map. Resolves false when nothing changed. */
  reloadTokens(): Promise<boolean>;
}

/** Throws ConfigError naming the setting (and file) for anything that would not work. */
export async function setUpAuth(config: Config, clock: Clock, logger: Logger, readText: ReadText, devTokenFile: DevTokenFile): Promise<AuthSetup> {
  const problems = securityProblems(config);
  if (problems.length) throw new ConfigError(problems);
  for (const w of securityWarnings(config)) logger.log('warn', w);
  const nothingToReload = async () => {
    logger.log('warn', 'token reload requested but PTY_WS_TOKENS_FILE is not set');
    return false;
  };
  if (!config.auth) return { auth: NO_AUTH, devToken: null, devTokenKept: false, reloadTokens: nothingToReload };

  const jwt = hasJwt(config) ? await jwtAuthenticator(config, clock, logger, readText) : null;
  if (config.tokensFile === undefined) {
    if (jwt) return { auth: jwt, devToken: null, devTokenKept: false, reloadTokens: nothingToReload };
    const dev = await setUpDevToken(config.devTokenPolicy, devTokenFile, clock, logger);
    if ('problem' in dev) throw new ConfigError([dev.problem]);
    return { auth: dev.auth, devToken: dev.token, devTokenKept: dev.token === null, reloadTokens: nothingToReload };
  }

  const file = config.tokensFile;
  const tokens = new TokenMapAuthenticator(readTokenMap(file, readText), clock);
  const reloadTokens = async () => {
    try {
      tokens.replace(readTokenMap(file, readText));
      logger.log('info', 'token map reloaded', { file, tokens: tokens.size });
      return true;
    } catch (e) {
      logger.log('error', 'token map reload failed: keeping the previous map', { file, error: e instanceof ConfigError ? e.problems.join('; ') : e });
      return false;
    }
  };
  return { auth: jwt ? new CompositeAuthenticator(tokens, jwt) : tokens, devToken: null, devTokenKept: false, reloadTokens };
}

function readTokenMap(file: string, readText: ReadText): TokenEntry[] {
  let text: string;
  try {
    text = readText(file);
  } catch (e) {
    throw new ConfigError([`PTY_WS_TOKENS_FILE ${file}: cannot read it (${errorCode(e)})`]);
  }
  try {
    return parseTokenMap(text);
  } catch (e) {
    if (e instanceof TokenMapError) throw new ConfigError([`PTY_WS_TOKENS_FILE ${file}: ${e.message}`]);
    throw e;
  }
}

function hasJwt(c: Config): boolean {
  return c.jwtSecret !== undefined || c.jwtPublicKey !== undefined || c.jwksUrl !== undefined;
}

async function jwtAuthenticator(config: Config, clock: Clock, logger: Logger, readText: ReadText): Promise<Authenticator> {
  const settings: JwtSettings = {};
  if (config.jwtSecret !== undefined) settings.secret = config.jwtSecret;
  if (config.jwtPublicKey !== undefined) settings.publicKey = keyMaterial(config.jwtPublicKey, readText);
  if (config.jwksUrl !== undefined) settings.jwksUrl = config.jwksUrl;
  if (config.jwtIssuer !== undefined) settings.issuer = config.jwtIssuer;
  if (config.jwtAudience !== undefined) settings.audience = config.jwtAudience;
  try {
    return await createJwtAuthenticator(settings, clock, logger);
  } catch (e) {
    if (e instanceof JwtConfigError) throw new ConfigError([e.message]);
    throw e;
  }
}

/** PTY_WS_JWT_PUBLIC_KEY is the key itself (PEM or JWK) or the path of a file holding it. */
function keyMaterial(value: string, readText: ReadText): string {
  const v = value.trim();
  if (v.startsWith('-----BEGIN') || v.startsWith('{')) return v;
  try {
    return readText(v);
  } catch (e) {
    throw new ConfigError([`PTY_WS_JWT_PUBLIC_KEY ${v}: neither a PEM/JWK key nor a readable file (${errorCode(e)})`]);
  }
}

/** The system error code both runtimes put on file errors (ENOENT, EACCES), else the error itself. */
export function errorCode(e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : String(e);
}
