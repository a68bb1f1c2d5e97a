import { contractCases } from './cli-action-cases.ts'

// The full and nulls variants, and a DONE record with null facts (the other two variants: cli-action.minimal-and-extras.test.ts).
contractCases(['full', 'nulls'], { nullFacts: true })
