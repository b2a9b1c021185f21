// The JSON and readable loggers write an error as itself: message, stack and the chain of causes.
import { describe, expect, it } from 'vitest';
import { jsonLogger } from '../../src/services/logger.ts';

function lines(pretty: boolean): { out: string[]; log: ReturnType<typeof jsonLogger> } {
  const out: string[] = [];
  return { out, log: jsonLogger('debug', { component: 'test' }, { pretty, write: (l) => void out.push(l) }) };
}

describe('jsonLogger', () => {
  it('writes an error with its stack, its system code and its causes', () => {
    const { out, log } = lines(false);
    const root = Object.assign(new Error('disk gone'), { code: 'EIO' });
    log.log('error', 'write failed', { error: new Error('commit failed', { cause: root }) });
    const line = JSON.parse(out[0]!) as { error: { message: string; stack: string; cause: { message: string; code: string; stack: string } } };
    expect(line.error.message).toBe('commit failed');
    expect(line.error.stack).toMatch(/^Error: commit failed\n\s+at /);
    expect(line.error.cause).toMatchObject({ message: 'disk gone', code: 'EIO', stack: expect.stringMatching(/^Error: disk gone\n\s+at /) });
  });

  it('ends a cycle of causes and keeps a thrown value that is not an Error as it is', () => {
    const { out, log } = lines(false);
    const a = new Error('a');
    a.cause = new Error('b', { cause: a });
    log.log('warn', 'cycle', { error: a, thrown: 'just a string' });
    const line = JSON.parse(out[0]!) as { error: unknown; thrown: unknown };
    expect(JSON.stringify(line.error).length).toBeLessThan(20_000);
    expect(line.thrown).toBe('just a string');
  });

  it('prints the stack and the causes under the readable line', () => {
    const { out, log } = lines(true);
    log.log('error', 'write failed', { session: 's1', error: new Error('commit failed', { cause: new Error('disk gone') }) });
    const [head, ...rest] = out[0]!.trimEnd().split('\n');
    expect(head).toMatch(/ERROR write failed {2}component=test session=s1 error="Error: commit failed"$/);
    expect(rest[0]).toBe('    Error: commit failed');
    expect(rest.some((l) => /^ {4}\s+at /.test(l))).toBe(true);
    expect(rest).toContain('    caused by: Error: disk gone');
  });
});
