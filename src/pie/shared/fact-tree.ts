/**
 * The output Merkle tree of a SHARP fact: its shape, as a PIE's
 * additional_data.json declares it (../validate/topology.ts reads it), and the walk from the
 * output's pages to the root that checks the shape fits the output. The validation walks it to
 * refuse a PIE whose pages do not fit; the fact (../facts/) walks it to hash.
 */
export type FactTopology = {
  /** Pairs (n_pages, n_nodes): push that many pages, then merge the top n_nodes nodes. */
  treeStructure: number[]
  /** Sizes of the output pages in words; page 0 first. */
  pageSizes: number[]
}

export class FactTopologyError extends Error {
  override name = 'FactTopologyError'
}

/** A node of the output tree while it is built: its value and the output word it ends at. */
export type FactTreeNode<T> = { value: T; end: number }

/**
 * Walks the output Merkle tree `topology` describes over an output of `outputLength` words,
 * from its pages to its root: `page(start, end)` makes a page's node from its words' range,
 * `node(children)` an inner node. Throws FactTopologyError when the tree does not fit the output.
 */
export function walkFactTree<T>(
  outputLength: number,
  topology: FactTopology,
  page: (start: number, end: number) => T,
  node: (children: FactTreeNode<T>[]) => T,
): T {
  const { treeStructure, pageSizes } = topology
  const stack: FactTreeNode<T>[] = []
  let nextPage = 0
  let offset = 0
  for (let k = 0; k + 1 < treeStructure.length; k += 2) {
    const nPages = treeStructure[k]!
    const nNodes = treeStructure[k + 1]!
    if (nextPage + nPages > pageSizes.length) throw new FactTopologyError('fact topology: n_pages is out of range')
    for (let p = 0; p < nPages; p++) {
      const start = offset
      offset += pageSizes[nextPage++]!
      stack.push({ value: page(start, offset), end: offset })
    }
    if (nNodes > stack.length) throw new FactTopologyError('fact topology: n_nodes is out of range')
    if (nNodes > 0) {
      const children = stack.splice(stack.length - nNodes, nNodes)
      stack.push({ value: node(children), end: children[children.length - 1]!.end })
    }
  }
  if (stack.length !== 1) throw new FactTopologyError('fact topology: the tree does not end with a single root')
  if (nextPage !== pageSizes.length) throw new FactTopologyError('fact topology: not all pages were used')
  if (offset !== outputLength || stack[0]!.end !== outputLength) {
    throw new FactTopologyError(`fact topology: pages cover ${offset} words, the output has ${outputLength}`)
  }
  return stack[0]!.value
}
