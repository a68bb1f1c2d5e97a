import { describe, expect, it } from 'vitest'
import { assertFelt, parseFact, toBytes32 } from '../../../src/chain/fact.ts'
import { rpcEndpoint } from '../../../src/chain/rpc.ts'
import { decodeChainId } from '../../../src/chain/starknet.ts'
import { InvalidInputError } from '../../../src/core/errors.ts'
import { SecretRedactor } from '../../../src/core/redact.ts'
import { STARK_PRIME } from '../../../src/pie/format.ts'

describe('facts as the chains take them', () => {
  it('reads 0x hex of at most 32 bytes, any case, leading zeros optional', () => {
    expect(parseFact('0x1')).toBe(1n)
    expect(parseFact(' 0xABcd ')).toBe(0xabcdn)
    expect(parseFact(`0x${'f'.repeat(64)}`)).toBe((1n << 256n) - 1n)
  })

  it('rejects anything else, naming the argument', () => {
    for (const bad of ['', '0x', '1234', '0xg1', `0x${'0'.repeat(65)}`, '0x 1', '-0x1']) {
      const error = (() => {
        try {
          parseFact(bad, '<fact>')
        } catch (e) {
          return e
        }
      })() as InvalidInputError
      expect(error, bad).toBeInstanceOf(InvalidInputError)
      expect(error.input).toBe('<fact>')
      expect(error.shortMessage).toMatch(/^<fact> must be 0x followed by 1 to 64 hex digits/)
    }
  })

  it('pads to bytes32 for isValid', () => {
    expect(toBytes32(0xabn)).toBe(`0x${'0'.repeat(62)}ab`)
    expect(toBytes32(parseFact(`0x${'1'.repeat(64)}`))).toBe(`0x${'1'.repeat(64)}`)
  })

  it('requires a felt on Starknet', () => {
    expect(assertFelt(STARK_PRIME - 1n)).toBe(STARK_PRIME - 1n)
    expect(() => assertFelt(STARK_PRIME, '<fact>')).toThrow(/<fact> is not a Starknet field element/)
  })
})

describe('Starknet chain ids', () => {
  it('decodes short strings and keeps anything else as hex', () => {
    expect(decodeChainId(0x534e5f5345504f4c4941n)).toBe('SN_SEPOLIA')
    expect(decodeChainId(0x534e5f4d41494en)).toBe('SN_MAIN')
    expect(decodeChainId(0x1n)).toBe('0x1')
    expect(decodeChainId(0n)).toBe('0x0')
  })
})

describe('RPC URLs are secrets', () => {
  const cases = [
    ['https://mainnet.infura.io/v3/0123456789abcdef0123456789abcdef', '0123456789abcdef0123456789abcdef'],
    ['https://eth-sepolia.g.alchemy.com/v2/AbCdEf123456_ghIJkl', 'AbCdEf123456_ghIJkl'],
    ['https://starknet-sepolia.example.com/rpc/v0_8?apikey=sk_live_42abcdef', 'sk_live_42abcdef'],
    ['https://starknet.example.com/?x-provider-token=tok3nValue99', 'tok3nValue99'],
    ['https://user:hunter2hunter2@rpc.example.com/', 'hunter2hunter2'],
    ['http://127.0.0.1:8545/v3/SECRETKEY123', 'SECRETKEY123'],
  ] as const

  it.each(cases)('%s: shown by host, masked everywhere', (url, secret) => {
    const endpoint = rpcEndpoint(url, '--ethereum-rpc')
    expect(endpoint.display).toBe(new URL(url).host)
    expect(endpoint.display).not.toContain(secret)
    for (const text of [
      `HTTP request failed. URL: ${url}`,
      `request to ${new URL(url).toString()} failed`,
      `secret alone: ${secret}.`,
      `path only: ${new URL(url).pathname}${new URL(url).search}`,
    ]) {
      expect(endpoint.scrub(text)).not.toContain(secret)
    }
  })

  it('leaves ordinary words and the host readable', () => {
    const endpoint = rpcEndpoint('https://rpc.example.com/starknet/rpc/v0_8', '--starknet-rpc')
    expect(endpoint.scrub('starknet_call failed on rpc.example.com')).toBe('starknet_call failed on rpc.example.com')
  })

  it("registers the secrets in the caller's redactor", () => {
    const redactor = new SecretRedactor()
    rpcEndpoint('https://mainnet.infura.io/v3/0123456789abcdef0123456789abcdef', '--ethereum-rpc', redactor)
    expect(redactor.redact('key 0123456789abcdef0123456789abcdef')).toBe('key ***')
  })

  it('rejects a malformed URL naming the flag, without echoing a key', () => {
    expect(() => rpcEndpoint('not a url', '--ethereum-rpc')).toThrow(/^--ethereum-rpc is not a valid URL/)
    expect(() => rpcEndpoint('ws://127.0.0.1:8545', '--ethereum-rpc')).toThrow(/must use http or https/)
    const error = (() => {
      try {
        rpcEndpoint('mainnet.infura.io/v3/x?apikey=supersecretvalue', '--ethereum-rpc')
      } catch (e) {
        return e as Error
      }
    })()
    expect(error?.message).not.toContain('supersecretvalue')
  })
})
