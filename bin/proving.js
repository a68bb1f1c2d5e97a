#!/usr/bin/env node
import '../lib/cli/run.js'
