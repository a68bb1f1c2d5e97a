import { describe, expect, it } from 'vitest'
import { parseFault } from '../../../src/emulator/faults.ts'

describe('parseFault (POST /_emulator/faults)', () => {
  it('fills the defaults: kind from status, one time, no skip, a delay only for delay kinds', () => {
    expect(parseFault({ path: '/proving-query/:id', status: 503, headers: { 'Retry-After': 2 } })).toMatchObject({
      kind: 'status',
      status: 503,
      method: null,
      headers: { 'retry-after': '2' },
      remaining: 1,
      skip: 0,
      delayMs: 0,
    })
    expect(parseFault({ path: '*', method: 'get' })).toMatchObject({ kind: 'error', method: 'GET', status: null })
    expect(parseFault({ path: '/x', kind: 'delay' })).toMatchObject({ delayMs: 1_000 })
  })

  it('names the first problem, field by field, in the documented words', () => {
    expect(parseFault([])).toBe('The body must be a JSON object.')
    expect(parseFault({})).toBe('path is required: a path or route pattern starting with "/", or "*" for every route.')
    expect(parseFault({ path: 'x' })).toBe(
      'path is required: a path or route pattern starting with "/", or "*" for every route.',
    )
    expect(parseFault({ path: '/_emulator/reset' })).toBe(
      'path must not be a control route: faults never apply to /_emulator/.',
    )
    expect(parseFault({ path: '/x', kind: 'nope' })).toMatch(/^kind must be one of error, status, /)
    expect(parseFault({ path: '/x', status: 99 })).toBe('status must be an HTTP status (100-599).')
    expect(parseFault({ path: '/x', times: 0 })).toBe('times must be a whole number from 1 to 1000000.')
    expect(parseFault({ path: '/x', skip: 1.5 })).toBe('skip must be a whole number from 0 to 1000000.')
    expect(parseFault({ path: '/x', delayMs: 600_001 })).toBe('delayMs must be from 0 to 600000.')
    expect(parseFault({ path: '/x', headers: ['a'] })).toBe('headers must be an object of strings.')
    expect(parseFault({ path: '/x', headers: { 'bad header': 'v' } })).toBe(
      'header "bad header" is not a valid HTTP header.',
    )
    expect(parseFault({ path: '/x', headers: { a: 'v\r\nx: y' } })).toBe('header "a" is not a valid HTTP header.')
  })

  it('checks how the fields go together', () => {
    expect(parseFault({ path: '/x', kind: 'drop', status: 500 })).toBe(
      'status goes with kind status, html-502 or gateway-404, not drop.',
    )
    expect(parseFault({ path: '/x', status: 502, contentType: 'text/html', body: { a: 1 } })).toBe(
      'contentType goes with a string body.',
    )
    expect(parseFault({ path: '/x', status: 502, contentType: 'text/html\r\n', body: '<p>' })).toBe(
      'contentType must be a string (the body is then sent as this raw text).',
    )
  })
})
