-- Pure rendering of ragLsp/status language servers (no server): one line per entry, the :RagStatus lines
-- per root, and how :checkhealth rates each state.
local T = dofile(vim.env.RAG_NVIM_TESTS .. '/helpers.lua')

local function entry(fields)
  return vim.tbl_extend('force', {
    server = 'pyright',
    command = vim.NIL,
    languages = { 'python' },
    state = 'ready',
    version = vim.NIL,
    pid = vim.NIL,
    restarts = 0,
    last_error = vim.NIL,
  }, fields)
end

T.run(function()
  vim.opt.rtp:prepend(T.plugin)
  local render = require('rag_lsp.render')

  local servers = {
    entry({ command = '/v/bin/pyright-langserver', version = '1.1.414', pid = 4242 }),
    entry({ server = 'gopls', languages = { 'go' }, state = 'missing',
      last_error = 'no go language server on PATH (tried gopls)' }),
    entry({ server = 'rust-analyzer', languages = { 'rust' }, state = 'down', restarts = 3,
      last_error = 'rust-analyzer exited with code 1:\n  error: no sysroot' }),
    entry({ server = 'typescript-language-server', languages = { 'javascript', 'typescript', 'tsx' },
      state = 'idle', command = '/usr/bin/typescript-language-server' }),
    entry({ server = 'clangd', languages = { 'c', 'cpp' }, state = 'restarting', restarts = 1,
      last_error = 'clangd exited with signal 11' }),
    entry({ server = 'gopls', languages = { 'go' }, state = 'disabled', last_error = 'disabled by settings' }),
    entry({ server = '', languages = { 'java' }, state = 'missing', last_error = 'no server configured for java' }),
    entry({ state = 'starting' }),
    entry({ state = 'ready', restarts = 1, last_error = 'crashed once' }),
  }
  T.set('lines', vim.tbl_map(render.language_server_line, servers))

  local languages = { python = 3, go = 1, rust = 2, c = 1 }
  T.set('health', vim.tbl_map(function(e)
    local level, advice = render.language_server_health(e, languages)
    return { level = level, advice = advice and table.concat(advice, ' ') or vim.NIL }
  end, servers))
  -- A missing server of a language the root has no files of is only information.
  T.set('health_no_files', (render.language_server_health(servers[2], { python = 3 })))

  local root = { root = '/w', files = 6, chunks = 13, definitions = 12, parse_errors = 0, languages = languages,
    cache = vim.NIL, language_servers = { servers[1], servers[2] } }
  local status = { version = '0.1.0', files = 6, chunks = 13, open_documents = 0,
    indexing = { done = 6, total = 6, running = false }, roots = { root }, language_servers = root.language_servers }
  T.set('status_lines', render.status_lines(status))
  T.set('top_level', render.language_servers(status))

  root.language_servers = {}
  T.set('status_none', render.status_lines(status))
  root.language_servers = nil
  status.language_servers = nil
  T.set('status_old', render.status_lines(status))
  T.set('old_server', render.language_servers(status) == nil)
end, 10000)
