import { keccak256, toHex } from 'viem/utils'

/**
 * EIP-712's own reference example ("Ether Mail"): assets/eip-712/Example.js of the EIP
 * (ethereum/EIPs at commit 68b7c485a712511a095e134d84b21217b0eb5a04). The script signs with the
 * key keccak256("cow") and asserts the digest 0xbe609aee...57bd2, v = 28 and the r and s below.
 * (Another version of that script in the repository's history adds an `httpOrigin` domain
 * field, and so asserts other values; the domain here is the EIP text's: name, version,
 * chainId, verifyingContract.) The same signature appears in
 * other libraries' tests of the example.
 */
export const MAIL = {
  domain: {
    name: 'Ether Mail',
    version: '1',
    chainId: 1,
    verifyingContract: '0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC',
  },
  types: {
    EIP712Domain: [
      { name: 'name', type: 'string' },
      { name: 'version', type: 'string' },
      { name: 'chainId', type: 'uint256' },
      { name: 'verifyingContract', type: 'address' },
    ],
    Person: [
      { name: 'name', type: 'string' },
      { name: 'wallet', type: 'address' },
    ],
    Mail: [
      { name: 'from', type: 'Person' },
      { name: 'to', type: 'Person' },
      { name: 'contents', type: 'string' },
    ],
  },
  primaryType: 'Mail',
  message: {
    from: { name: 'Cow', wallet: '0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826' },
    to: { name: 'Bob', wallet: '0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB' },
    contents: 'Hello, Bob!',
  },
}

export const COW_KEY = keccak256(toHex('cow'))
export const COW = '0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826'
/** The signing digest the script asserts. */
export const MAIL_DIGEST = '0xbe609aee343fb3c4b28e1df9e632fca64fcfaede20f02e86244efddf30957bd2'
export const R = '4355c47d63924e8a72e509b65029052eb6c299d53a04e167c5775fd466751c9d'
export const S = '07299936d304c153f6443dfa05f40ff007d72911b6f72307f996231605b91562'
const V = (28).toString(16)
/** r ‖ s ‖ v of the published example. */
export const MAIL_SIGNATURE = `0x${R}${S}${V}`
