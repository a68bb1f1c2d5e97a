import { describe, expect, it } from 'vitest'
import { rpcEndpoint } from '../../../src/chain/rpc.ts'
import { SecretRedactor } from '../../../src/core/redact.ts'

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
