-- Code lenses appear above definitions and resolve to `N references · M tests · context`; the server's
-- workspace/codeLens/refresh is honoured; running a lens shows the symbol's context in the quickfix list.
local T = dofile(vim.env.RAG_NVIM_TESTS .. '/helpers.lua')

T.run(function()
  T.bootstrap()
  local buf = T.open('shop/ledger.py')
  local client = T.attached(buf)
  T.indexed(client)
  local lens = require('rag_lsp.lens')
  T.wait('the server to ask for a lens refresh (after indexing)', function()
    return lens.server_refreshes > 0
  end)
  T.set('server_refreshes', lens.server_refreshes)

  -- Lenses asked for while indexing may count too little; after the server's refresh they are right.
  -- Each lens resolves on its own, so wait until both `class Ledger` and `def post` count the test.
  T.wait('the lenses above `class Ledger` and `def post` to count the test that uses them', function()
    local all = T.lenses(buf)
    T.set('lenses', all)
    local right = 0
    for _, l in ipairs(all) do
      if (l.line == 5 or l.line == 11) and l.title == '1 reference · 1 test · context' then
        right = right + 1
      end
    end
    return right == 2
  end)
  T.set('virtual_text_post', T.wait('the lens text on screen', function()
    local text = T.lens_text(buf, 11)
    return text and text:find('reference', 1, true) and text
  end))

  vim.api.nvim_win_set_cursor(0, { 11, 4 })
  vim.lsp.codelens.run()
  local qf = T.quickfix_for('RagSymbol Ledger.post')
  T.set('lens_quickfix', qf)
end)
