import { contractCases } from './cli-action-cases.ts'

// The minimal and extras variants (the first two: cli-action.full-and-nulls.test.ts).
contractCases(['minimal', 'extras'])
