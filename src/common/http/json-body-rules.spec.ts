import { findJsonBodyViolation } from './json-body-rules';

const bytes = (text: string) => Buffer.from(text, 'utf8');
const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describe('findJsonBodyViolation', () => {
  it('allows exactly the depth limit and refuses one level more', () => {
    expect(findJsonBodyViolation(bytes(nested(32)), 32)).toBeNull();
    expect(findJsonBodyViolation(bytes(nested(33)), 32)).toBe('tooDeep');
    expect(findJsonBodyViolation(bytes(`{"a":${nested(31)}}`), 32)).toBeNull();
    expect(findJsonBodyViolation(bytes(`{"a":{"b":${nested(31)}}}`), 32)).toBe('tooDeep');
  });

  it('counts depth, not the number of brackets', () => {
    expect(findJsonBodyViolation(bytes(`[${'[],'.repeat(1000)}[]]`), 2)).toBeNull();
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    expect(findJsonBodyViolation(bytes(JSON.stringify({ a: '[[[[[[{{{{{' })), 2)).toBeNull();
    expect(findJsonBodyViolation(bytes(JSON.stringify({ a: 'say "[[[[[[" ok', b: 'é[[[[' })), 2)).toBeNull();
    expect(findJsonBodyViolation(bytes(`{"a\\"":[[[[]]]]}`), 3)).toBe('tooDeep');
  });

  it('refuses the NUL character in keys and values, and nothing that only looks like it', () => {
    expect(findJsonBodyViolation(bytes(JSON.stringify({ name: 'a\u0000b' })), 32)).toBe('invalidCharacter');
    expect(findJsonBodyViolation(bytes(JSON.stringify({ 'k\u0000': 1 })), 32)).toBe('invalidCharacter');
    expect(findJsonBodyViolation(bytes(JSON.stringify({ name: 'a\\u0000b' })), 32)).toBeNull();
    expect(findJsonBodyViolation(bytes(JSON.stringify({ name: 'u0000', other: '\u0001\u00e9' })), 32)).toBeNull();
  });

  it('refuses unpaired surrogate escapes and accepts paired ones', () => {
    expect(findJsonBodyViolation(bytes(JSON.stringify({ name: '\ud800' })), 32)).toBe('invalidCharacter');
    expect(findJsonBodyViolation(bytes(JSON.stringify({ name: 'x\udc00y' })), 32)).toBe('invalidCharacter');
    expect(findJsonBodyViolation(bytes('{"name":"\\ud800\\u0041"}'), 32)).toBe('invalidCharacter');
    expect(findJsonBodyViolation(bytes('{"name":"\\ud83d\\ude00"}'), 32)).toBeNull();
    expect(findJsonBodyViolation(bytes(JSON.stringify({ name: '😀 \u00e9' })), 32)).toBeNull();
    expect(findJsonBodyViolation(bytes('{"name":"\\u00e9\\"[[["}'), 2)).toBeNull();
  });

  it('judges bodies of the maximum size', () => {
    expect(findJsonBodyViolation(bytes(nested(128 * 1024)), 32)).toBe('tooDeep');
    expect(findJsonBodyViolation(bytes(`"${'['.repeat(256 * 1024)}"`), 32)).toBeNull();
  });
});
