// The step server as its own process: `node --import tsx test/support/stepServerMain.ts '<options JSON>'`.
// Prints `{"port":N}` once listening; exits when stdin closes (so it never outlives its parent) or on SIGTERM.
import { serveAsProcess } from './scriptedServer';
import { startStepServer } from './stepServer';
import type { StepServerOptions } from './stepServer';

serveAsProcess<StepServerOptions>('step server', startStepServer);
