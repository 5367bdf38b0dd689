// Types of esbuild.mjs for the tests that build with its own options.
import type { BuildOptions } from 'esbuild';

export declare const targets: BuildOptions[];
export declare function optionsFor(target: BuildOptions, options?: { production?: boolean }): BuildOptions;
