// Two projects: fast unit specs beside the code, and e2e suites that boot the real app on
// PostgreSQL and Redis. swc keeps decorator metadata so Nest DI and MikroORM reflection work.
const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      keepClassNames: true,
      target: 'es2022',
    },
    module: { type: 'commonjs' },
    sourceMaps: 'inline',
  },
];

module.exports = {
  testTimeout: 60000,
  // Test files run one at a time, each in a fresh worker process (a memory limit of 0 recycles the
  // worker after every file). Libraries register process-wide state when imported: async-context
  // stores that every later promise walks, a GC observer and an event-loop monitor for the
  // metrics. A jest module realm cannot release them, so in one process each suite added its own
  // and a full run slowed as it went, until suites late in the order (in-process proxies, chain
  // following, webhook judging) missed their waits.
  maxWorkers: 1,
  workerIdleMemoryLimit: 0,
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      transform: { '^.+\\.ts$': swc },
      testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/examples/**/*.spec.ts'],
    },
    {
      displayName: 'e2e',
      testEnvironment: 'node',
      transform: { '^.+\\.ts$': swc },
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
      setupFiles: ['<rootDir>/test/support/setup-realm.ts'],
    },
  ],
};
