// (to be written)
import type { Step } from './uiKit';

export const endpointSteps: Step[] = [];
