'use strict';
// HALO from Node.js: loads the same protos/halo/v1/*.proto files the Python stubs are generated
// from (no generated code to drift) and returns @grpc/grpc-js clients for the halo.v1 services.
//
//   const halo = require('./halo');
//   const env = halo.client('EnvService', '127.0.0.1:50051');
//   const created = await halo.call(env, 'CreateSession', {task_id: 'playground-signup'});
//
// Several env replicas behind one target: halo.envFleet('host:port,host:port') (below).
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

// gRPC health of a whole server (service ""), hand-encoded: HealthCheckRequest{service: ""} is
// empty and HealthCheckResponse is one varint field, status (1 = SERVING), so no health proto.
const HealthClient = grpc.makeGenericClientConstructor({
  Check: {
    path: '/grpc.health.v1.Health/Check', requestStream: false, responseStream: false,
    requestSerialize: () => Buffer.alloc(0), requestDeserialize: () => ({}),
    responseSerialize: () => Buffer.alloc(0),
    responseDeserialize: (b) => ({serving: b.length >= 2 && b[0] === 0x08 && b[1] === 1}),
  },
});

// An env fleet: several env service replicas behind one target, 'host:port,host:port' (the
// Python client, halo.client.fleet, also resolves fleet://name:port). A new session goes to the
// replica that serves with the lowest active_sessions/capacity (GetPoolStats, read on every
// CreateSession: fresh, a few ms per replica); every later call that names a session_id goes to
// the replica that created it. No load balancer: replicas share nothing.
//
//   const env = halo.envFleet('10.0.0.5:50051,10.0.0.6:50051');
//   const created = await env.call('CreateSession', {task_id: 'playground-signup'});
//   await env.call('Step', {session_id: created.session_id, action: {noop: {}}});
class EnvFleet {
  constructor(target, {token = '', credentials = grpc.credentials.createInsecure()} = {}) {
    const addresses = target.split(',').map((a) => a.trim()).filter(Boolean);
    if (addresses.length === 0 || addresses.some((a) => !/^.+:\d+$/.test(a))) {
      throw new Error(`env fleet target ${JSON.stringify(target)}: expected host:port,host:port`);
    }
    this.target = target;
    this.replicas = addresses.map((address) => ({
      address, env: client('EnvService', address, {token, credentials}),
      health: new HealthClient(address, credentials), created: 0,
    }));
    this.owners = new Map();   // session_id -> replica
  }

  async _load(replica) {
    try {
      const health = await new Promise((resolve, reject) => replica.health.Check({}, {deadline: new Date(Date.now() + 2000)},
        (err, reply) => (err ? reject(err) : resolve(reply))));
      if (!health.serving) return Infinity;   // draining: no new sessions
      const stats = await call(replica.env, 'GetPoolStats', {}, {timeoutS: 2});
      return stats.active_sessions / Math.max(stats.capacity, 1);
    } catch (err) {
      return Infinity;                         // away
    }
  }

  async _create(request, opts) {
    const loads = await Promise.all(this.replicas.map((r) => this._load(r)));
    const order = this.replicas.map((r, i) => [loads[i], i, r]).filter(([l]) => l !== Infinity).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    if (order.length === 0) throw new Error(`no env replica of ${this.target} is serving`);
    let last;
    for (const [, , replica] of order) {
      try {
        const created = await call(replica.env, 'CreateSession', request, opts);
        replica.created += 1;
        this.owners.set(created.session_id, replica);
        return created;
      } catch (err) {
        last = err;   // full (RESOURCE_EXHAUSTED) or away (UNAVAILABLE): the next one
        if (err.code !== grpc.status.RESOURCE_EXHAUSTED && err.code !== grpc.status.UNAVAILABLE) throw err;
      }
    }
    throw last;
  }

  async _owner(sessionId) {
    if (this.owners.has(sessionId)) return this.owners.get(sessionId);
    // a session this client did not create: ask every replica
    const held = await Promise.all(this.replicas.map((r) => call(r.env, 'KeepAlive', {session_ids: [sessionId]}, {timeoutS: 5})
      .then((reply) => reply.alive > 0, () => false)));
    const index = held.indexOf(true);
    if (index < 0) throw new Error(`session ${sessionId} is open on no replica of ${this.target}`);
    this.owners.set(sessionId, this.replicas[index]);
    return this.replicas[index];
  }

  // Any EnvService method: CreateSession is placed, session calls are pinned, ListSessions is merged
  // over the replicas; anything else (the task registry, the same on all) goes to the first that answers.
  async call(method, request = {}, opts = {}) {
    if (method === 'CreateSession') return this._create(request, opts);
    if (request.session_id) {
      const owner = await this._owner(request.session_id);
      const reply = await call(owner.env, method, request, opts);
      if (method === 'CloseSession') this.owners.delete(request.session_id);
      return reply;
    }
    if (method === 'ListSessions') {
      const replies = await Promise.all(this.replicas.map((r) => call(r.env, method, request, opts).catch(() => null)));
      const answered = replies.filter(Boolean);
      return {sessions: answered.flatMap((r) => r.sessions), total: answered.reduce((n, r) => n + r.total, 0)};
    }
    let last;
    for (const replica of this.replicas) {
      try {
        return await call(replica.env, method, request, opts);
      } catch (err) {
        last = err;
        if (err.code !== grpc.status.UNAVAILABLE) throw err;
      }
    }
    throw last;
  }

  close() {
    for (const r of this.replicas) { r.env.close(); r.health.close(); }
  }
}

function envFleet(target, options) {
  return new EnvFleet(target, options);
}

module.exports = {grpc, load, client, call, envFleet, EnvFleet, protoFiles, PROTOS_ROOT};
