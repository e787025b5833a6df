// @ts-check
import eslint from '@eslint/js';
import { defineConfig } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['dist/', 'coverage/', 'temp/', 'bench/results/'] },
  eslint.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: globals.node,
      parserOptions: {
        // Each file is checked against the tsconfig.json nearest to it: the service's for the
        // TypeScript, the portal assets' own (DOM, checkJs) for the browser script.
        projectService: {
          // Plain CommonJS scripts that Node loads directly and no tsconfig includes.
          allowDefaultProject: ['*.js', '*.mjs', 'bench/*.js', 'scripts/*.js'],
        },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // A promise nobody awaits loses its rejection (an unhandled rejection ends the process) and
      // its ordering; an async callback where a sync one is expected (Express handlers, event
      // emitters, array callbacks) does the same. Both stay errors in every file.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      // Passing on a caught rejection (typed unknown) is forwarding, not inventing a non-Error
      // reason; only-throw-error allows the same for `throw` by default.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
      // A leading underscore marks a name left unused on purpose (a parameter an interface
      // imposes, a field split off with a rest pattern).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  {
    // Tests, benchmarks and drills read HTTP answers whose bodies are `any` (supertest's
    // `res.body`, JSON from receivers, the OpenAPI document walked by shape); typing every body
    // would only restate the assertion that follows. The promise rules above still apply to them.
    files: ['test/**/*.ts', 'bench/**/*.ts', '**/*.spec.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // CommonJS files run by Node as they are (jest's config, the benchmark's `node -r` preload).
    files: ['*.js', 'bench/*.js', 'scripts/*.js'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The portal's script runs in the browser, served as is.
    files: ['src/modules/portal/assets/*.js'],
    languageOptions: { globals: globals.browser, sourceType: 'script' },
  },
);
