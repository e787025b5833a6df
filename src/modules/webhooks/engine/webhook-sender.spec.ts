import { RESPONSE_BODY_BYTES, responseBodyText, secretLookaheadBytes } from './webhook-sender';

describe('responseBodyText', () => {
  it('decodes UTF-8 as is', () => {
    expect(responseBodyText(Buffer.from('{"ok":true} é 漢'))).toBe('{"ok":true} é 漢');
  });

  it('replaces invalid sequences and NUL with U+FFFD', () => {
    expect(responseBodyText(Buffer.from([0x61, 0xff, 0x62, 0x00, 0x63]))).toBe('a\uFFFDb\uFFFDc');
  });

  it('leaves out a character split by the cut of a longer answer, but not at the real end of an answer', () => {
    const split = Buffer.from('ab漢').subarray(0, 4); // "ab" and the first two of the character's three bytes
    expect(responseBodyText(split, true)).toBe('ab');
    expect(responseBodyText(split, false)).toBe('ab\uFFFD');
  });

  it('gives an empty string for an empty answer', () => {
    expect(responseBodyText(Buffer.alloc(0))).toBe('');
  });
});

describe('responseBodyText with secrets', () => {
  const token = 'eyJhbGciOiJIUzI1NiJ9.token-Zq9';
  const gateway = 'gw 4f1c9a ~!';
  const read = (text: string) => Buffer.from(text);

  it('replaces every occurrence of each secret, as sent or JSON-escaped, and leaves the rest as it was', () => {
    const quoted = 'say "hi"\\';
    const body = JSON.stringify({ authorization: `Bearer ${token}`, again: token, gateway, quoted });
    expect(responseBodyText(read(body), false, [token, ` ${gateway} `, quoted])).toBe(
      JSON.stringify({ authorization: 'Bearer [redacted]', again: '[redacted]', gateway: '[redacted]', quoted: '[redacted]' }),
    );
  });

  it('replaces a secret that begins before the 1,024-byte cut whole, leaving no prefix of it', () => {
    const body = `${'.'.repeat(1020)}Bearer ${token} and more`;
    const lookahead = secretLookaheadBytes([token]);
    expect(lookahead).toBe(token.length - 1);
    const kept = Buffer.from(body).subarray(0, RESPONSE_BODY_BYTES + lookahead);
    expect(responseBodyText(kept, true, [token])).toBe(`${'.'.repeat(1020)}Bear`);
    const early = `${'.'.repeat(1014)}${token}|tail`;
    expect(responseBodyText(Buffer.from(early).subarray(0, RESPONSE_BODY_BYTES + lookahead), true, [token])).toBe(
      `${'.'.repeat(1014)}[redacted]`,
    );
    // Without the secret, the same cut as ever.
    expect(responseBodyText(Buffer.from(early).subarray(0, RESPONSE_BODY_BYTES + lookahead), true, [])).toBe(early.slice(0, 1024));
  });

  it('makes one marker of overlapping secrets, and ignores empty or blank ones', () => {
    expect(responseBodyText(read('abcdef'), false, ['bcd', 'cde', '', '  '])).toBe('a[redacted]f');
    expect(responseBodyText(read('a b'), false, [' '])).toBe('a b');
  });

  it('keeps the text within 1,024 characters when markers are longer than the secrets they replace', () => {
    const text = responseBodyText(read('ab'.repeat(512)), false, ['a']);
    expect(text).toBe(`${'[redacted]b'.repeat(93)}[`);
    expect(text).toHaveLength(1024);
    expect(text.length).toBeLessThanOrEqual(1024);
    expect(responseBodyText(read(`${'a'.repeat(1012)}s😀😀`), false, ['s'])).toBe(`${'a'.repeat(1012)}[redacted]😀`);
    expect(responseBodyText(read(`${'a'.repeat(1013)}s${'😀'.repeat(3)}`), false, ['s'])).toBe(`${'a'.repeat(1013)}[redacted]`);
  });

  it('needs no lookahead without secrets', () => {
    expect(secretLookaheadBytes([])).toBe(0);
    expect(secretLookaheadBytes(['  '])).toBe(0);
  });
});
