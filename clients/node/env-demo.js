#!/usr/bin/env node
'use strict';
// Drive one env session from Node.js: list tasks, create a session, click an element by its bid,
// read the site's state, close. Prints one JSON object; exits 1 on any gRPC error.
//
//   node clients/node/env-demo.js --target 127.0.0.1:50051 --task playground-signup --click "Sign up"
//   node clients/node/env-demo.js --target 127.0.0.1:50051,127.0.0.1:50061   (an env fleet: halo.envFleet)

const halo = require('./halo');

function parseArgs(argv) {
  const args = {target: '127.0.0.1:50051', task: 'playground-signup', click: 'Sign up', token: ''};
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '');
    if (!(key in args) || argv[i + 1] === undefined) {
      throw new Error(`usage: env-demo.js [--target host:port] [--task id] [--click "element name"] [--token t]`);
    }
    args[key] = argv[i + 1];
  }
  return args;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const fleet = args.target.includes(',');
  const env = fleet ? halo.envFleet(args.target, {token: args.token}) : halo.client('EnvService', args.target, {token: args.token});
  const envCall = fleet ? (method, request) => env.call(method, request) : (method, request) => halo.call(env, method, request);
  const observation = {skip_screenshot: true};
  try {
    const listed = await envCall('ListTasks', {});
    const task = listed.tasks.find((t) => t.id === args.task);
    if (!task) throw new Error(`task ${args.task} is not in the registry (${listed.tasks.length} tasks)`);

    const created = await envCall('CreateSession', {task_id: args.task, observation});
    const sessionId = created.session_id;
    const element = created.observation.elements.find((e) => e.name === args.click);
    if (!element) throw new Error(`no element named ${JSON.stringify(args.click)} on ${created.observation.url}`);

    const stepped = await envCall('Step', {
      session_id: sessionId,
      action: {click_element: {bid: element.bid}, raw_text: `click(${element.bid}) from node`},
      observation,
    });
    const state = await envCall('GetState', {session_id: sessionId});
    const replica = fleet ? env.owners.get(sessionId).address : args.target;
    const closed = await envCall('CloseSession', {session_id: sessionId});
    console.log(JSON.stringify({
      tasks: listed.tasks.length,
      task: {id: task.id, site: task.site, goal: task.goal, replica_available: task.replica_available},
      session_id: sessionId,
      replica,
      start_url: created.observation.url,
      clicked: {bid: element.bid, role: element.role, name: element.name},
      action_ok: stepped.action_ok,
      action_error: stepped.action_error,
      done: stepped.done,
      termination: stepped.termination,
      env_failure: stepped.env_failure,
      after: stepped.observation.elements.map((e) => e.name).filter(Boolean),
      state: JSON.parse(state.state_json || '{}'),
      closed: closed.was_open,
    }, null, 2));
  } finally {
    env.close();
  }
}

main().catch((err) => {
  console.error(`env-demo: ${err.code !== undefined ? `${halo.grpc.status[err.code]}: ${err.details}` : err.message}`);
  process.exit(1);
});
