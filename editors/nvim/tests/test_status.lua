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
end)
