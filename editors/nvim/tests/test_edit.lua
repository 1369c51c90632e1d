-- Typing into a buffer (not saved) changes the answer: a question nothing matches is answered by the
-- function just typed, and the new function gets a lens once insert mode is left.
local T = dofile(vim.env.RAG_NVIM_TESTS .. '/helpers.lua')

local QUESTION = 'refund a damaged parcel'

T.run(function()
  T.bootstrap()
  local buf = T.open('shop/ledger.py')
  local client = T.attached(buf)
  T.indexed(client)
  -- The server's own lens refresh after indexing comes first, so that the lens of the typed function can
  -- only come from the plugin's InsertLeave refresh.
  local lens = require('rag_lsp.lens')
  T.wait('the lens refresh after indexing', function()
    return lens.server_refreshes > 0
  end)
  local server_refreshes = lens.server_refreshes
  local disk_before = table.concat(vim.fn.readfile(vim.api.nvim_buf_get_name(buf)), '\n')

  vim.cmd('RagContext ' .. QUESTION)
  T.set('before', T.quickfix_for('RagContext ' .. QUESTION).items)
  vim.fn.setqflist({}, 'r', { title = 'cleared' })
  vim.api.nvim_set_current_win(vim.fn.bufwinid(buf))

  local lines_before = vim.api.nvim_buf_line_count(buf)
  -- Without a vimrc, autoindent would add to the indentation typed below.
  vim.bo[buf].autoindent = false
  vim.bo[buf].expandtab = true
  T.type(
    'Go<CR>    def refund_damaged_parcel(self, parcel):<CR>'
      .. '        """Refund a damaged parcel to the account of its currency."""<CR>'
      .. '        return parcel.amount<Esc>',
    'the typed function',
    function()
      local last = vim.api.nvim_buf_get_lines(buf, -2, -1, false)[1]
      return vim.api.nvim_get_mode().mode == 'n' and last == '        return parcel.amount'
    end
  )
  local def_line = lines_before + 2
  T.set('typed_line', vim.api.nvim_buf_get_lines(buf, def_line - 1, def_line, false)[1])
  T.set('modified', vim.bo[buf].modified)

  -- InsertLeave refreshed the lenses: the new definition has one.
  T.set('new_lens', T.wait('a lens above the typed function', function()
    for _, lens in ipairs(T.lenses(buf)) do
      if lens.line == def_line then
        return lens.title
      end
    end
  end))

  T.set('server_refreshes_while_typing', lens.server_refreshes - server_refreshes)

  vim.cmd('RagContext ' .. QUESTION)
  T.set('after', T.quickfix_for('RagContext ' .. QUESTION).items)
  T.set('def_line', def_line)
  local disk_after = table.concat(vim.fn.readfile(vim.api.nvim_buf_get_name(buf)), '\n')
  T.set('disk_unchanged', disk_before == disk_after)
end)
