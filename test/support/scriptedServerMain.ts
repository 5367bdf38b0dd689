// The scripted server as its own process: `node --import tsx test/support/scriptedServerMain.ts '<options JSON>'`.
// Prints `{"port":N}` once listening; exits when stdin closes (so it never outlives its parent) or on SIGTERM.
import { serveAsProcess, startScriptedServer } from './scriptedServer';
import type { ScriptedServerOptions } from './scriptedServer';

serveAsProcess<ScriptedServerOptions>('scripted server', startScriptedServer);
