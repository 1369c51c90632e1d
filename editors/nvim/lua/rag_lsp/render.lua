--- Pure functions from the server's answers to text: quickfix items, the readable block, status lines.
--- Nothing here touches buffers or windows, so it is easy to test.
local M = {}

--- JSON null arrives as vim.NIL from some decoders; treat it as absent.
local function val(x)
  if x == vim.NIL then
    return nil
  end
  return x
end
M.val = val

local function plural(n, word)
  return ('%d %s%s'):format(n, word, n == 1 and '' or 's')
end

--- The item's file name on disk: its `uri`, else `root`/`path`.
function M.filename(item, result)
  local uri = val(item.uri)
  if uri then
    return vim.uri_to_fname(uri)
  end
  local root = val(item.root) or val(vim.tbl_get(result or {}, 'index', 'root'))
  if root then
    return vim.fs.joinpath(root, item.path)
  end
  return item.path
end

--- What the place is: its qualified name, its name, else `<kind>`.
function M.label(item)
  return val(item.qualname) or val(item.symbol) or ('<' .. (val(item.kind) or 'code') .. '>')
end

--- The reasons, joined.
function M.why(item)
  local why = val(item.why) or {}
  return table.concat(why, '; ')
end

--- Quickfix items (|setqflist()|): one per place, the symbol and the why in the text.
function M.qf_items(result)
  local items = {}
  for rank, item in ipairs(val(result.items) or {}) do
    items[#items + 1] = {
      filename = M.filename(item, result),
      lnum = val(item.focus_line) or item.start_line,
      end_lnum = item.end_line,
      text = ('%s — %s'):format(M.label(item), M.why(item)),
      user_data = { rank = rank, score = item.score, path = item.path, kind = val(item.kind) },
    }
  end
  return items
end

--- One line about the answer: places, tokens, budget, time, index size, indexing progress.
function M.summary(result)
  local items = val(result.items) or {}
  local index = val(result.index) or {}
  local counter = val(result.token_count) or 'estimate'
  local counted = counter == 'estimate' and ('~%s tokens (estimated)'):format(val(result.tokens) or 0)
    or ('%s tokens (%s)'):format(val(result.tokens) or 0, counter)
  local parts = {
    ('%s, %s of %s%s; %.1f ms ranking over %s files / %s chunks'):format(
      plural(#items, 'place'),
      counted,
      val(result.budget_tokens) or '?',
      val(result.truncated) and ', truncated' or '',
      tonumber(val(result.elapsed_ms)) or 0,
      val(index.files) or '?',
      val(index.chunks) or '?'
    ),
  }
  local indexing = val(result.indexing)
  if indexing then
    parts[#parts + 1] = ('indexing %s/%s files'):format(val(indexing.done) or '?', val(indexing.total) or '?')
  end
  for _, warning in ipairs(val(result.warnings) or {}) do
    parts[#parts + 1] = warning
  end
  return table.concat(parts, '; ')
end

--- A short summary for the quickfix title: `2 places, ~114 tokens[, truncated][, indexing 3/8 files]`.
function M.short_summary(result)
  local text = ('%s, ~%s tokens'):format(plural(#(val(result.items) or {}), 'place'), val(result.tokens) or 0)
  if val(result.truncated) then
    text = text .. ', truncated'
  end
  local indexing = val(result.indexing)
  if indexing then
    text = text .. (', indexing %s/%s files'):format(val(indexing.done) or '?', val(indexing.total) or '?')
  end
  return text
end

--- The readable block, as `rag-lsp context` prints it (tests/editors/test_nvim.py compares them):
--- `N. path:line (symbol) — why` then the code,
--- indented. `opts.footer = false` leaves out the summary line (for prompts).
function M.block(result, opts)
  opts = opts or {}
  local lines = {}
  for rank, item in ipairs(val(result.items) or {}) do
    if rank > 1 then
      lines[#lines + 1] = ''
    end
    local symbol = val(item.symbol) and (' (' .. (val(item.qualname) or item.symbol) .. ')') or ''
    lines[#lines + 1] = ('%d. %s:%d%s — %s'):format(rank, item.path, val(item.focus_line) or item.start_line, symbol,
      M.why(item))
    local content = val(item.content)
    if content then
      for _, line in ipairs(vim.split(content, '\n', { plain = true })) do
        lines[#lines + 1] = '    ' .. line
      end
    end
  end
  if opts.footer ~= false then
    if #lines == 0 then
      lines[#lines + 1] = 'no matching places'
    else
      lines[#lines + 1] = ''
    end
    lines[#lines + 1] = M.summary(result)
  end
  return lines
end

--- `key value, key value` for a table, keys sorted (values of lists joined).
local function pairs_text(tbl, sep)
  local keys = vim.tbl_keys(tbl)
  table.sort(keys, function(a, b)
    return tostring(a) < tostring(b)
  end)
  local parts = {}
  for _, key in ipairs(keys) do
    local value = val(tbl[key])
    if type(value) == 'table' then
      value = vim.islist(value) and ('[' .. table.concat(vim.tbl_map(tostring, value), ', ') .. ']')
        or ('{' .. pairs_text(value, ' ') .. '}')
    end
    parts[#parts + 1] = ('%s%s%s'):format(key, sep or ' ', tostring(value == nil and 'null' or value))
  end
  return table.concat(parts, ', ')
end
M.pairs_text = pairs_text

--- Languages by count, largest first: `python 3, typescript 2`.
function M.languages(languages)
  local names = vim.tbl_keys(languages or {})
  table.sort(names, function(a, b)
    if languages[a] ~= languages[b] then
      return languages[a] > languages[b]
    end
    return a < b
  end)
  return table.concat(
    vim.tbl_map(function(name)
      return name .. ' ' .. languages[name]
    end, names),
    ', '
  )
end

--- The indexing progress: `6/6 files, done` or `3/6 files (50%), running`.
function M.indexing(status)
  local indexing = val(status.indexing)
  if not indexing then
    return 'not reported'
  end
  local done, total = tonumber(val(indexing.done)) or 0, tonumber(val(indexing.total)) or 0
  if val(indexing.running) then
    local percent = total > 0 and math.floor(100 * done / total) or 0
    return ('%d/%d files (%d%%), running'):format(done, total, percent)
  end
  return ('%d/%d files, done'):format(done, total)
end

--- States in which `last_error` is the current problem (elsewhere it is history, or empty).
local TROUBLE_STATES = { missing = true, disabled = true, restarting = true, down = true }
--- What a state means when no error says more.
local STATE_NOTES = { idle = 'starts on first need' }

--- One language server of `ragLsp/status` (`{server, command, languages, state, version, pid, restarts,
--- last_error}`) as a line: `pyright (python): ready, 1.1.414`,
--- `gopls (go): missing — no go language server on PATH (tried gopls)`, `rust-analyzer (rust): down — <error>`.
function M.language_server_line(entry)
  if type(entry) ~= 'table' then
    return tostring(entry)
  end
  local name = val(entry.server)
  if name == nil or name == '' then
    name = 'no server'
  end
  local languages = val(entry.languages) or {}
  local head = #languages > 0 and ('%s (%s)'):format(name, table.concat(vim.tbl_map(tostring, languages), ', '))
    or tostring(name)
  local state = val(entry.state) or 'unknown'
  local facts = { state }
  local version = val(entry.version)
  if version and version ~= '' then
    facts[#facts + 1] = tostring(version)
  end
  local restarts = tonumber(val(entry.restarts)) or 0
  if restarts > 0 then
    facts[#facts + 1] = plural(restarts, 'restart')
  end
  local note
  if TROUBLE_STATES[state] then
    note = val(entry.last_error)
    note = note and vim.trim((tostring(note):gsub('%s*\n%s*', ' '))) or nil
  else
    note = STATE_NOTES[state]
  end
  return ('%s: %s%s'):format(head, table.concat(facts, ', '), (note and note ~= '') and (' — ' .. note) or '')
end

--- The language servers of a status or of one of its roots, one line each (`{}` when none is planned);
--- nil when the server does not report them (a rag-lsp older than language-server composition).
function M.language_servers(status)
  local servers = val(status.language_servers)
  if servers == nil then
    return nil
  end
  local lines = {}
  for _, entry in ipairs(vim.islist(servers) and servers or {}) do
    lines[#lines + 1] = M.language_server_line(entry)
  end
  return lines
end

M.NO_LANGUAGE_SERVERS = 'this rag-lsp reports no language servers'
M.NONE_PLANNED = 'none (the tree-sitter patterns answer for every language)'

--- How :checkhealth rates a language server: 'ok', 'warn', 'error' or 'info', and advice for the user.
--- `indexed` (optional) maps language → indexed files of the root: a missing or disabled server of a language
--- the root has no files of is only 'info'.
function M.language_server_health(entry, indexed)
  local state = val(entry.state)
  local languages = val(entry.languages) or {}
  local relevant = indexed == nil
  for _, language in ipairs(languages) do
    if indexed and (tonumber(val(indexed[language])) or 0) > 0 then
      relevant = true
    end
  end
  if state == 'ready' or state == 'idle' or state == 'starting' then
    return 'ok'
  elseif state == 'down' then
    return 'error', {
      'rag-lsp stopped restarting it (3 crashes within 5 minutes, or a binary that cannot run); '
        .. 'the patterns answer instead. Fix the cause (see the rag-lsp log), then restart the rag_lsp client.',
    }
  elseif state == 'restarting' then
    return 'warn', { 'It crashed; rag-lsp restarts it after a backoff (1 s, 2 s, 4 s, ...).' }
  elseif state == 'missing' or state == 'disabled' then
    if not relevant then
      return 'info'
    end
    local language = languages[1] or 'LANGUAGE'
    if state == 'disabled' then
      return 'warn', { ('Its files are left to the tree-sitter patterns; remove `enabled = false` from '
        .. 'settings.languageServers.%s (or .rag-lsp.toml) to use it.'):format(language) }
    end
    return 'warn', { ('Install one of the commands tried, or name one: '
      .. "setup({ settings = { languageServers = { %s = { command = '...' } } } })."):format(language) }
  end
  return 'info'
end

--- Per-root lines for a status report (without indentation).
function M.root_lines(root)
  local lines = {
    ('%s files · %s chunks · %s definitions · %s parse errors'):format(
      val(root.files) or 0,
      val(root.chunks) or 0,
      val(root.definitions) or 0,
      val(root.parse_errors) or 0
    ),
  }
  local languages = val(root.languages)
  if languages and next(languages) then
    lines[#lines + 1] = 'languages: ' .. M.languages(languages)
  end
  local skipped = val(root.skipped)
  if skipped and next(skipped) then
    lines[#lines + 1] = 'skipped: ' .. pairs_text(skipped)
  end
  lines[#lines + 1] = 'cache: ' .. tostring(val(root.cache) or 'off')
  local settings = val(root.settings)
  if settings then
    lines[#lines + 1] = 'settings: ' .. pairs_text(settings)
  end
  return lines
end

--- The warnings of a root: index warnings and settings warnings.
function M.root_warnings(root)
  local warnings = {}
  vim.list_extend(warnings, val(root.warnings) or {})
  vim.list_extend(warnings, val(root.settings_warnings) or {})
  return warnings
end

--- The whole status as lines (for :RagStatus).
function M.status_lines(status)
  local lines = {
    ('rag-lsp %s · %s files · %s chunks · %s'):format(
      val(status.version) or '?',
      val(status.files) or 0,
      val(status.chunks) or 0,
      plural(tonumber(val(status.open_documents)) or 0, 'open document')
    ),
    'indexing: ' .. M.indexing(status),
  }
  local reported = true
  for _, root in ipairs(val(status.roots) or {}) do
    lines[#lines + 1] = 'root ' .. tostring(val(root.root))
    for _, line in ipairs(M.root_lines(root)) do
      lines[#lines + 1] = '  ' .. line
    end
    for _, warning in ipairs(M.root_warnings(root)) do
      lines[#lines + 1] = '  warning: ' .. warning
    end
    local servers = M.language_servers(root)
    if servers == nil then
      reported = false
    elseif #servers == 0 then
      lines[#lines + 1] = '  language servers: ' .. M.NONE_PLANNED
    else
      lines[#lines + 1] = '  language servers:'
      for _, line in ipairs(servers) do
        lines[#lines + 1] = '    ' .. line
      end
    end
  end
  if not reported then
    lines[#lines + 1] = 'language servers: ' .. M.NO_LANGUAGE_SERVERS
  end
  return lines
end

return M
