--- :checkhealth rag_lsp — the server binary and its version, the clients, the index, settings, warnings.
local M = {}

local config = require('rag_lsp.config')
local render = require('rag_lsp.render')

local STATUS_TIMEOUT_MS = 5000

--- The server command the client uses: the resolved vim.lsp config's, else the plugin options'.
local function server_cmd()
  local ok, resolved = pcall(function()
    return vim.lsp.config[config.name]
  end)
  if ok and resolved and type(resolved.cmd) == 'table' then
    return resolved.cmd
  end
  return config.options.cmd
end

local function check_binary(health)
  health.start('rag_lsp: server binary')
  local cmd = server_cmd()
  local exe = vim.fn.exepath(cmd[1])
  if exe == '' then
    health.error(('server command not found: %s'):format(cmd[1]), {
      'Install rag_lsp (in its repository: bash scripts/setup.sh, which creates .venv/bin/rag-lsp).',
      'Then point the plugin at it: require("rag_lsp").setup{ cmd = { "/path/to/.venv/bin/rag-lsp", "serve" } }',
    })
    return nil
  end
  health.ok(('server command: %s (%s)'):format(table.concat(cmd, ' '), exe))
  local ok, result = pcall(function()
    return vim.system({ exe, '--version' }, { text = true }):wait(10000)
  end)
  if not ok or result.code ~= 0 then
    health.error(('`%s --version` failed: %s'):format(exe, ok and (result.stderr or result.code) or result))
    return nil
  end
  local version = vim.trim(result.stdout or '')
  health.ok('version: ' .. version)
  return version
end

local function check_clients(health)
  health.start('rag_lsp: client')
  if not vim.lsp.is_enabled(config.name) then
    health.warn('the rag_lsp LSP config is not enabled', { 'Call require("rag_lsp").setup{} in your config.' })
  end
  local clients = vim.lsp.get_clients({ name = config.name })
  if #clients == 0 then
    health.warn('no rag_lsp client is running', {
      'Open a file whose filetype is one of: ' .. table.concat(config.options.filetypes, ', '),
    })
    return clients
  end
  for _, client in ipairs(clients) do
    local names = {}
    for bufnr in pairs(client.attached_buffers) do
      names[#names + 1] = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ':~:.')
    end
    table.sort(names)
    if #names > 0 then
      health.ok(('client %d attached (root %s) to %d buffer%s: %s'):format(
        client.id, tostring(client.root_dir), #names, #names == 1 and '' or 's', table.concat(names, ', ')))
    else
      health.warn(('client %d is running (root %s) but attached to no buffer'):format(client.id,
        tostring(client.root_dir)))
    end
  end
  local alternate = vim.fn.bufnr('#')
  if alternate > 0 and vim.api.nvim_buf_get_name(alternate) ~= '' then
    local attached = #vim.lsp.get_clients({ name = config.name, bufnr = alternate }) > 0
    health.info(('the buffer you came from (%s) is %sattached'):format(
      vim.fn.fnamemodify(vim.api.nvim_buf_get_name(alternate), ':~:.'), attached and '' or 'not '))
  end
  return clients
end

local function status_of(client)
  -- An empty object rather than no params: rag-lsp 0.1.0 never answers a request without "params".
  local response, err = client:request_sync(config.methods.status, vim.empty_dict(), STATUS_TIMEOUT_MS)
  if not response then
    return nil, err or 'no answer'
  end
  if response.err then
    return nil, response.err.message or vim.inspect(response.err)
  end
  return response.result
end

local function check_index(health, client, status, binary_version)
  health.start(('rag_lsp: index (client %d)'):format(client.id))
  local version = render.val(status.version)
  local open = tonumber(render.val(status.open_documents)) or 0
  health.info(('server version %s; %s files, %s chunks, %d open document%s'):format(
    tostring(version), status.files or 0, status.chunks or 0, open, open == 1 and '' or 's'))
  if binary_version and version and not binary_version:find(version, 1, true) then
    health.warn(('the running server is %s but the binary reports %s: restart with :lsp restart or :e'):format(
      version, binary_version))
  end
  local indexing = render.indexing(status)
  local running = render.val(vim.tbl_get(status, 'indexing', 'running'))
  if running then
    health.info('indexing: ' .. indexing)
  else
    health.ok('indexing: ' .. indexing)
  end
  local roots = render.val(status.roots) or {}
  if #roots == 0 then
    health.warn('the server has no workspace root', { 'Open a file inside a project (root markers: ' ..
      table.concat(vim.tbl_map(vim.inspect, config.options.root_markers), ', ') .. ')' })
  end
  for _, root in ipairs(roots) do
    local lines = render.root_lines(root)
    health.ok(('root %s: %s'):format(render.val(root.root), lines[1]))
    for i = 2, #lines do
      health.info(lines[i])
    end
    for _, warning in ipairs(render.root_warnings(root)) do
      health.warn(warning)
    end
  end
end

local function check_settings(health)
  health.start('rag_lsp: settings')
  local settings = config.options.settings
  health.info('client settings (initializationOptions, didChangeConfiguration): ' ..
    (next(settings) and render.pairs_text(settings) or 'none (server defaults)'))
  health.info(('filetypes: %s'):format(table.concat(config.options.filetypes, ', ')))
  health.info(('code lenses: %s; quickfix: %s; scratch: %s; status: %s'):format(
    config.options.codelens and 'on' or 'off', config.options.open_quickfix and 'opens' or 'filled only',
    config.options.scratch and 'on' or 'with !', config.options.status))
end

local function check_language_servers(health, statuses)
  health.start('rag_lsp: language servers')
  if #statuses == 0 then
    health.info('unknown: no status from a running server')
    return
  end
  for _, status in ipairs(statuses) do
    local roots = render.val(status.roots) or {}
    for _, root in ipairs(roots) do
      local entries = render.val(root.language_servers)
      local where = #roots > 1 and (' [root %s]'):format(render.val(root.root)) or ''
      if entries == nil then
        health.info(render.NO_LANGUAGE_SERVERS .. where)
      elseif #entries == 0 then
        health.info(render.NONE_PLANNED .. where)
      end
      for _, entry in ipairs(entries or {}) do
        local line = render.language_server_line(entry) .. where
        local level, advice = render.language_server_health(entry, render.val(root.languages) or {})
        local command = render.val(entry.command)
        if level == 'ok' and command then
          line = ('%s · %s'):format(line, command)
        end
        health[level](line, advice)
      end
    end
  end
end

function M.check()
  local health = vim.health
  health.start('rag_lsp: Neovim')
  if vim.fn.has('nvim-0.11') == 1 then
    health.ok('Neovim ' .. tostring(vim.version()))
  else
    health.error('rag_lsp needs Neovim 0.11 or newer, this is ' .. tostring(vim.version()))
  end
  local binary_version = check_binary(health)
  local clients = check_clients(health)
  local statuses = {}
  for _, client in ipairs(clients) do
    local status, err = status_of(client)
    if status then
      statuses[#statuses + 1] = status
      check_index(health, client, status, binary_version)
    else
      health.start(('rag_lsp: index (client %d)'):format(client.id))
      health.error('ragLsp/status failed: ' .. tostring(err))
    end
  end
  check_settings(health)
  check_language_servers(health, statuses)
end

return M
