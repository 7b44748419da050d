// Lint: typescript-eslint's type-aware rules that catch what a type check cannot (a promise
// nobody awaits, a switch that forgot a case), and the project's own rules (scripts/lint-rules.ts).
// `npm run lint`; `.ci/run` and `npm run check` run it with zero findings allowed.
import { defineConfig } from 'eslint/config'
import tseslint from 'typescript-eslint'
import { AROUND_THE_CATALOGUE, nightjarRules } from './scripts/lint-rules.ts'

export default defineConfig(
  { ignores: ['node_modules/**', '.nightjar/**', '.tap/**'] },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin, nightjar: nightjarRules },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-floating-promises': ['error', {
        // tap's t.test: a parent awaits its subtests before it ends (the rule below keeps
        // the parent's own later work from racing one)
        allowForKnownSafePromises: [{ from: 'package', name: 'PromiseWithSubtest', package: '@tapjs/core' }],
      }],
      '@typescript-eslint/no-misused-promises': 'error',
      // the house style: `type` inline beside the values of the same import
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      // a `default` is the author saying "everything else"
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      'nightjar/silent-catch-says-why': 'error',
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      'nightjar/subtest-before-awaited-work': 'error',
      // a test's teardown drops what it cannot close: there is nothing left to tell
      'nightjar/silent-catch-says-why': 'off',
    },
  },
  {
    files: ['api-server/**/*.ts', 'browser-pod/**/*.ts', 'operator/**/*.ts', 'cli/**/*.ts', 'tunnel/**/*.ts', 'contracts/**/*.ts'],
    // the catalogue itself
    ignores: ['contracts/errors.ts', 'contracts/errors/**'],
    rules: { 'no-restricted-syntax': ['error', ...AROUND_THE_CATALOGUE] },
  },
)
