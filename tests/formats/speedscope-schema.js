#!/usr/bin/env node
// Validate speedscope JSON files against the file format's JSON schema,
// the one the speedscope package ships (dist/release/file-format-schema.json),
// with ajv. Prints "ok FILE" per file; exits non-zero with ajv's errors
// on the first file that does not validate.
'use strict';
const fs = require('fs');
const path = require('path');
const Ajv = require('ajv');

const dir = path.join(path.dirname(require.resolve('speedscope/package.json')), 'dist', 'release');
const schema = JSON.parse(fs.readFileSync(path.join(dir, 'file-format-schema.json'), 'utf8'));
const ajv = new Ajv({ allErrors: true, strict: false });
const validate = ajv.compile(schema);
for (const file of process.argv.slice(2)) {
  const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
  if (!validate(doc)) {
    console.error(`speedscope-schema: ${file}: ${ajv.errorsText(validate.errors)}`);
    process.exit(1);
  }
  console.log(`ok ${file}`);
}
