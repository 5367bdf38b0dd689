// Azure OpenAI's deployment URLs: POST {resource}/openai/deployments/{deployment}/chat/completions
// ?api-version=…, the key in `api-key`. The stream is OpenAI chat's (a first chunk with empty
// `choices` and `prompt_filter_results`, `content_filter_results` beside each delta), read by
// openaiChat.ts. The deployment, not the body's `model`, picks the model: the URL names it and the
// model list cannot (Azure lists base models, not deployments). The URL's query travels with every
// request. The newer ".../openai/v1" form is OpenAI's own API (`openai-chat` with
// `--api-key-header api-key`); given here, it is sent to {base}/openai/v1/chat/completions.
// Azure refuses fields it does not know: no ignore_eos, whatever the workload says.
import type { EndpointSpec, RequestSpec } from '../../core/types';
import type { BuiltRequest, EndpointAdapter, EventInfo } from './adapter';
import { replacePath, requestPath, splitBaseUrl } from './adapter';
import { interpretOpenAi, openaiChatAdapter } from './openaiChat';

/** `/openai/deployments/{name}`, and a `/chat/completions` after it when the URL is the whole operation's. */
const DEPLOYMENT = /\/openai\/deployments\/([^/]+)(?:\/chat\/completions)?$/;

export const azureOpenAiAdapter: EndpointAdapter = {
  api: 'azure-openai',
  // Under /openai (see probeBaseUrl): the resource's model list, which checks the key. It lists base
  // models, not deployments: the deployment the URL names is its one model.
  probePath: '/models',

  probeBaseUrl(url: string): string {
    return replacePath(url, DEPLOYMENT, '/openai');
  },

  modelsOf(url: string): string[] {
    const deployment = deploymentOf(url);
    return deployment !== undefined ? [deployment] : [];
  },

  buildRequest(spec: RequestSpec, endpoint: EndpointSpec): BuiltRequest {
    const built = openaiChatAdapter.buildRequest({ ...spec, ignoreEos: false }, endpoint);
    const split = splitBaseUrl(endpoint.url);
    const deployment = DEPLOYMENT.exec(split.basePath);
    const path = deployment
      ? requestPath({ ...split, basePath: split.basePath.slice(0, deployment.index) + `/openai/deployments/${deployment[1]!}` }, '/chat/completions')
      : requestPath(split, '/v1/chat/completions');
    return { ...built, path };
  },

  interpret(event: unknown): EventInfo {
    return interpretOpenAi(event, 'chat');
  },
};

/** The deployment a URL names (`…/openai/deployments/{name}…`), decoded; undefined for other URLs. */
export function deploymentOf(url: string): string | undefined {
  let path: string;
  try {
    path = new URL(url).pathname.replace(/\/+$/, '');
  } catch {
    return undefined;
  }
  const m = DEPLOYMENT.exec(path);
  if (!m) return undefined;
  try {
    return decodeURIComponent(m[1]!);
  } catch {
    return m[1];
  }
}
