import { prettyLogs } from './logging';

describe('prettyLogs', () => {
  const env = { isTty: true, hasPretty: true };

  it('writes readable lines in development on a terminal, or when asked', () => {
    expect(prettyLogs({ logFormat: 'auto', nodeEnv: 'development' }, env)).toBe(true);
    expect(prettyLogs({ logFormat: 'pretty', nodeEnv: 'production' }, { ...env, isTty: false })).toBe(true);
  });

  it('keeps JSON in production, off a terminal, when asked, for a given destination, and without pino-pretty', () => {
    expect(prettyLogs({ logFormat: 'auto', nodeEnv: 'production' }, env)).toBe(false);
    expect(prettyLogs({ logFormat: 'auto', nodeEnv: 'development' }, { ...env, isTty: false })).toBe(false);
    expect(prettyLogs({ logFormat: 'json', nodeEnv: 'development' }, env)).toBe(false);
    expect(prettyLogs({ logFormat: 'pretty', nodeEnv: 'development' }, env, process.stderr)).toBe(false);
    expect(prettyLogs({ logFormat: 'pretty', nodeEnv: 'development' }, { ...env, hasPretty: false })).toBe(false);
  });
});
