// Every command id, in one place. They match `contributes.commands` in package.json
// (test/unit/extensionManifest.test.ts keeps the two in step).
export const enum Command {
  ProfileEndpoint = 'llmProfiler.profileEndpoint',
  StartLocalServer = 'llmProfiler.startLocalServer',
  StopLocalServer = 'llmProfiler.stopLocalServer',
  CancelRun = 'llmProfiler.cancelRun',
  AddEndpoint = 'llmProfiler.addEndpoint',
  SetApiKey = 'llmProfiler.setApiKey',
  EditEndpoint = 'llmProfiler.editEndpoint',
  RemoveEndpoint = 'llmProfiler.removeEndpoint',
  OpenRun = 'llmProfiler.openRun',
  CompareRuns = 'llmProfiler.compareRuns',
  ExportRunCsv = 'llmProfiler.exportRunCsv',
  DeleteRun = 'llmProfiler.deleteRun',
  ShowLog = 'llmProfiler.showLog',
  ProfilePrompt = 'llmProfiler.profilePrompt',
  ProfilePromptWith = 'llmProfiler.profilePromptWith',
  ShowPromptProblem = 'llmProfiler.showPromptProblem',
  FillPromptVariables = 'llmProfiler.fillPromptVariables',
  ComparePrefillChunks = 'llmProfiler.comparePrefillChunks',
  OpenBenchmarkResult = 'llmProfiler.openBenchmarkResult',
  PinBaseline = 'llmProfiler.pinBaseline',
  UnpinBaseline = 'llmProfiler.unpinBaseline',
  CompareEndpoints = 'llmProfiler.compareEndpoints',
  ProfileDataset = 'llmProfiler.profileDataset',
  GetStarted = 'llmProfiler.getStarted',
  NewPromptFile = 'llmProfiler.newPromptFile',
  FinishMultilineInput = 'llmProfiler.finishMultilineInput',
  CancelMultilineInput = 'llmProfiler.cancelMultilineInput',
}


export const VIEW_SIDEBAR = 'llmProfiler.sidebar';
