import { hashTypedData, recoverTypedDataAddress, verifyTypedData } from 'viem/utils'
import { describe, expect, it } from 'vitest'
import { localSigner, normalizePrivateKey } from '../../../src/clients/account.ts'
import { InvalidInputError } from '../../../src/core/errors.ts'
import { COW, COW_KEY, MAIL, MAIL_DIGEST, MAIL_SIGNATURE } from '../../helpers/mail-example.ts'

describe('EIP-712 signing (the path AccountClient signs challenges with)', () => {
  it('the EIP reference "Mail" example signs to its published signature (v 28, r 0x4355..., s 0x0729...)', async () => {
    expect(hashTypedData(MAIL as unknown as Parameters<typeof hashTypedData>[0])).toBe(MAIL_DIGEST)
    const signer = await localSigner(COW_KEY)
    expect(signer.address).toBe(COW)
    expect(await signer.signTypedData(MAIL)).toBe(MAIL_SIGNATURE)
  })

  it('the same without EIP712Domain in types (derived from the domain, as viem does)', async () => {
    const { EIP712Domain: _, ...types } = MAIL.types
    const signer = await localSigner(COW_KEY)
    expect(await signer.signTypedData({ ...MAIL, types })).toBe(MAIL_SIGNATURE)
  })

  it("matches viem's own verification and recovers the signer", async () => {
    const key = `0x${'5a'.repeat(32)}`
    const signer = await localSigner(key)
    const typedData = {
      domain: { name: 'Proving Account Service', version: '1', chainId: 1 },
      types: {
        SignIn: [
          { name: 'wallet', type: 'address' },
          { name: 'nonce', type: 'string' },
        ],
      },
      primaryType: 'SignIn',
      message: { wallet: signer.address, nonce: 'abc123' },
    }
    const signature = await signer.signTypedData(typedData)
    const viemTyped = typedData as unknown as Parameters<typeof verifyTypedData>[0]
    expect(
      await verifyTypedData({
        ...viemTyped,
        address: signer.address as `0x${string}`,
        signature: signature as `0x${string}`,
      }),
    ).toBe(true)
    expect(await recoverTypedDataAddress({ ...viemTyped, signature: signature as `0x${string}` })).toBe(signer.address)
    // One changed field and it is another message: the signature no longer verifies.
    const altered = { ...viemTyped, message: { wallet: signer.address, nonce: 'abc124' } }
    expect(
      await verifyTypedData({
        ...altered,
        address: signer.address as `0x${string}`,
        signature: signature as `0x${string}`,
      }),
    ).toBe(false)
  })

  it('the published Mail signature verifies with viem against Cow', async () => {
    const typed = MAIL as unknown as Parameters<typeof verifyTypedData>[0]
    expect(await verifyTypedData({ ...typed, address: COW, signature: MAIL_SIGNATURE as `0x${string}` })).toBe(true)
  })
})

describe('private keys', () => {
  it('accepts 64 hex digits with or without 0x', () => {
    expect(normalizePrivateKey(`0x${'AB'.repeat(32)}`)).toBe(`0x${'ab'.repeat(32)}`)
    expect(normalizePrivateKey(` ${'ab'.repeat(32)}\n`)).toBe(`0x${'ab'.repeat(32)}`)
  })

  it('refuses anything else without quoting it', () => {
    const secretish = `0x${'c0ffee'.repeat(10)}zz`
    try {
      normalizePrivateKey(secretish)
      throw new Error('expected a refusal')
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidInputError)
      expect((error as Error).message).not.toContain('c0ffee')
    }
  })

  it('refuses the zero key (not a valid secp256k1 key) without quoting it', async () => {
    await expect(localSigner(`0x${'00'.repeat(32)}`)).rejects.toBeInstanceOf(InvalidInputError)
  })
})
