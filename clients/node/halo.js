'use strict';
// HALO from Node.js: loads the same protos/halo/v1/*.proto files the Python stubs are generated
// from (no generated code to drift) and returns @grpc/grpc-js clients for the halo.v1 services.
//
//   const halo = require('./halo');
//   const env = halo.client('EnvService', '127.0.0.1:50051');
//   const created = await halo.call(env, 'CreateSession', {task_id: 'playground-signup'});
//
// Messages use the protos' own field names (snake_case, as in grpcurl and Python), enums are
// strings, int64 are strings, and oneofs are set by naming their field: {click_element: {bid: '3'}}.

const fs = require('fs');
const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const PROTOS_ROOT = process.env.HALO_PROTOS || path.resolve(__dirname, '..', '..', 'protos');

function protoFiles(root = PROTOS_ROOT) {
  const dir = path.join(root, 'halo', 'v1');
  return fs.readdirSync(dir).filter((f) => f.endsWith('.proto')).sort().map((f) => `halo/v1/${f}`);
}

let cached = null;

function load(root = PROTOS_ROOT) {
  if (cached === null || cached.root !== root) {
    const definition = protoLoader.loadSync(protoFiles(root), {
      includeDirs: [root], keepCase: true, longs: String, enums: String, defaults: true, oneofs: true,
    });
    cached = {root, package: grpc.loadPackageDefinition(definition)};
  }
  return cached.package.halo.v1;
}

// A client of one halo.v1 service ('EnvService', 'RewardService', 'PolicyGatewayService', 'TrainerService').
function client(service, target, {token = '', credentials = grpc.credentials.createInsecure()} = {}) {
  const Service = load()[service];
  if (!Service) throw new Error(`no service halo.v1.${service} in ${PROTOS_ROOT}`);
  const c = new Service(target, credentials, {
    'grpc.max_receive_message_length': 16 * 1024 * 1024,
  });
  c.haloToken = token;
  return c;
}

// Promise-returning unary call with a deadline; rejects with the gRPC error (err.code, err.details).
function call(c, method, request, {timeoutS = 60} = {}) {
  const metadata = new grpc.Metadata();
  if (c.haloToken) metadata.set('authorization', `Bearer ${c.haloToken}`);
  const deadline = new Date(Date.now() + timeoutS * 1000);
  return new Promise((resolve, reject) => {
    c[method](request, metadata, {deadline}, (err, reply) => (err ? reject(err) : resolve(reply)));
  });
}

module.exports = {grpc, load, client, call, protoFiles, PROTOS_ROOT};
