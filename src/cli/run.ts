#!/usr/bin/env node
import { closeDefaultDispatcher } from '../core/http.ts'
import { main } from './main.ts'

const code = await main(process.argv.slice(2))
// Idle keep-alive sockets would hold the process open for a few seconds; nothing is pending now.
await closeDefaultDispatcher()
process.exit(code)
