import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { compilePedersenWasm, GENERATED, generatedModule } from '../../../scripts/build-wasm.ts'

describe('src/pie/pedersen-wasm.ts', () => {
  it('is what wasm/pedersen.ts compiles to (run npm run build:wasm after changing it)', { timeout: 120_000 }, async () => {
    const committed = await readFile(GENERATED, 'utf8')
    expect(committed).toBe(generatedModule(await compilePedersenWasm()))
  })
})
