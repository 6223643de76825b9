import { describe, expect, it } from 'vitest';
import { printable } from './printable.js';

describe('printable', () => {
  it('escapes line breaks, control characters and Unicode line separators', () => {
    expect(printable('a\nerror: b')).toBe('a\\nerror: b');
    expect(printable('a\r\n\u2028\u2029')).toBe('a\\r\\n\\u2028\\u2029');
    expect(printable('\u001b[2J\u0000\u007f\u009b')).toBe('\\u001b[2J\\u0000\\u007f\\u009b');
  });

  it('keeps tabs, quotes, backslashes and every printable character', () => {
    const text = 'tab\there "q" \'s\' back\\slash ünïcødé 🚀 {{ x }} */';
    expect(printable(text)).toBe(text);
  });
});
