import { describe, expect, it } from 'vitest'
import {
  describeRedirect,
  fetchWithoutRedirects,
  isPlainHttpToAnotherMachine,
  redirectTarget,
  refusesPlainHttp,
} from '../../../../src/core/http/network-rule.ts'

describe('the plain-http rule', () => {
  it('refuses http to another machine unless allowed; loopback, https and text that does not parse pass', () => {
    expect(refusesPlainHttp('http://rpc.example.com/v3/key', false)).toBe(true)
    expect(refusesPlainHttp('http://rpc.example.com/v3/key', undefined)).toBe(true)
    expect(refusesPlainHttp('http://rpc.example.com/v3/key', true)).toBe(false)
    for (const url of [
      'http://localhost:1',
      'http://a.localhost',
      'http://127.9.0.1',
      'http://[::1]:8',
      'https://rpc.example.com',
      'not a url',
    ]) {
      expect(isPlainHttpToAnotherMachine(url), url).toBe(false)
    }
  })
})

describe('where a redirect may lead', () => {
  const from = new URL('https://artifacts.example.com/q/1/proof.json')
  it('within the same origin only', () => {
    expect(redirectTarget(from, '/q/1/proof-2.json')).toEqual({
      next: new URL('https://artifacts.example.com/q/1/proof-2.json'),
    })
    expect(redirectTarget(from, 'https://elsewhere.example.com/p')).toEqual({
      refused: 'to another origin, https://elsewhere.example.com',
    })
    expect(redirectTarget(from, 'https://artifacts.example.com:8443/p')).toEqual({
      refused: 'to another origin, https://artifacts.example.com:8443',
    })
  })
  it('never down to plain http, even on the same host', () => {
    expect(redirectTarget(from, 'http://artifacts.example.com/q/1/proof.json')).toEqual({
      refused: 'to plain http on another origin, http://artifacts.example.com',
    })
  })
  it('not to a location that is missing or does not parse', () => {
    expect(redirectTarget(from, undefined)).toEqual({ refused: 'to a location that is not a URL' })
    expect(redirectTarget(from, 'http://[bad')).toEqual({ refused: 'to a location that is not a URL' })
  })
  it('is described by scheme and host only (a key in the path or query stays out)', () => {
    expect(
      describeRedirect(307, 'http://evil.example:8545/v3/SECRETKEY?apikey=SECRET', 'https://rpc.example.com'),
    ).toBe('a 307 redirect to http://evil.example:8545')
    expect(describeRedirect(302, null)).toBe('a 302 redirect to no valid location')
  })
})

describe('fetchWithoutRedirects', () => {
  it('asks fetch never to follow a redirect, whatever the caller asked', async () => {
    const seen: (RequestInit | undefined)[] = []
    const fetch = fetchWithoutRedirects(async (_input, init) => {
      seen.push(init)
      return new Response(null, { status: 307, headers: { location: 'http://elsewhere.example' } })
    })
    const response = await fetch('https://rpc.example.com', { method: 'POST', redirect: 'follow' })
    expect(response.status).toBe(307)
    expect(seen).toEqual([{ method: 'POST', redirect: 'manual' }])
  })
})
