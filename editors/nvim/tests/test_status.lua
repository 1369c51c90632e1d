-- :RagStatus shows ragLsp/status in a float that closes when the cursor moves; :RagStatus! echoes it.
local T = dofile(vim.env.RAG_NVIM_TESTS .. '/helpers.lua')

local function floats()
  local found = {}
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(win).relative ~= '' then
      found[#found + 1] = win
    end
  end
  return found
end

T.run(function()
  T.bootstrap()
  local buf = T.open('shop/ledger.py')
  local client = T.attached(buf)
  T.indexed(client)

  -- A lookup needs the Python language server (pyright, a test extra): it starts, and the status shows it.
  local err = T.request(client, 'ragLsp/lookup', { symbol = 'Ledger.post', what = 'hover',
    textDocument = { uri = vim.uri_from_bufnr(buf) } }, buf)
  T.expect(not err, 'ragLsp/lookup failed', err)
  local pyright = T.wait('the Python language server to be ready', function()
    local status_err, status = T.request(client, 'ragLsp/status', vim.empty_dict())
    T.expect(not status_err, 'ragLsp/status failed', status_err)
    for _, entry in ipairs(status.language_servers or {}) do
      if vim.tbl_contains(entry.languages or {}, 'python') and entry.state ~= 'starting' and entry.state ~= 'idle' then
        return entry
      end
    end
  end, 30000)
  T.set('python_server', pyright)

  vim.cmd('RagStatus')
  local win = T.wait('the status float', function()
    return floats()[1]
  end)
  T.set('float_lines', vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false))
  T.set('float_border', vim.api.nvim_win_get_config(win).border ~= nil)
  T.type('j', 'the float to close when the cursor moves', function()
    return #floats() == 0
  end)

  vim.cmd('RagStatus!')
  T.set('messages', vim.split(T.wait('the echoed status', function()
    local messages = vim.fn.execute('messages')
    return messages:find('indexing:', 1, true) and messages
  end), '\n'))
end, 60000)
