import { findRow, insert, removeRow, table } from "../db";
import { ApiError, type Db, type Json, type Row } from "../types";
import {
  type AppModule,
  defineApp,
  getRow,
  loginApi,
  matchesQuery,
  newestFirst,
  opt,
  owned,
  pick,
  req,
  stampDaysAgo,
} from "./common";

export const CATEGORIES = ["electronics", "kitchen", "books", "clothing", "sports"];

/** [name, lowest price, highest price] per category; invented products. */
const PRODUCTS: Record<string, [string, number, number][]> = {
  electronics: [
    ["Wireless Earbuds", 39, 89],
    ["Bluetooth Speaker", 29, 79],
    ["USB-C Charger", 15, 35],
    ["Noise Cancelling Headphones", 129, 249],
    ["Smart Watch", 149, 299],
    ["Portable Power Bank", 19, 49],
    ["Mechanical Keyboard", 59, 139],
  ],
  kitchen: [
    ["Chef's Knife", 25, 89],
    ["Cast Iron Skillet", 22, 55],
    ["French Press", 18, 42],
    ["Electric Kettle", 24, 60],
    ["Cutting Board Set", 15, 38],
    ["Stand Mixer", 199, 349],
    ["Spice Rack", 19, 45],
  ],
  books: [
    ["The Quiet Orchard", 9, 18],
    ["Cooking for Two", 14, 29],
    ["Mountains of the West", 19, 39],
    ["A Brief History of Maps", 12, 26],
    ["Learn Python in a Month", 24, 45],
    ["The Lighthouse Keeper", 8, 17],
    ["Mindful Mornings", 10, 22],
  ],
  clothing: [
    ["Rain Jacket", 49, 119],
    ["Wool Socks (3 pack)", 12, 24],
    ["Denim Jacket", 45, 95],
    ["Running Shorts", 18, 35],
    ["Cotton T-Shirt", 9, 22],
    ["Winter Beanie", 12, 28],
    ["Leather Belt", 19, 49],
  ],
  sports: [
    ["Yoga Mat", 19, 59],
    ["Water Bottle", 9, 29],
    ["Resistance Bands", 12, 30],
    ["Tennis Racket", 49, 149],
    ["Camping Tent", 89, 229],
    ["Bike Helmet", 35, 79],
    ["Jump Rope", 7, 19],
  ],
};

const PRODUCT_FIELDS = ["product_id", "name", "category", "price", "rating"];
const productView = (r: Row) => pick({ ...r, product_id: r.id }, PRODUCT_FIELDS);
const ORDER_FIELDS = ["order_id", "status", "total", "item_count", "created_at"];

type Item = { product_id: number; name: string; quantity: number; price: number };

const cents = (n: number) => Math.round(n * 100) / 100;

function product(db: Db, id: number): Row {
  return getRow(db, "products", id, "product");
}

function cartItems(ctx: { db: Db; user: string }): Item[] {
  return table(ctx.db, "cart_items")
    .filter((c) => c.owner === ctx.user)
    .sort((a, b) => a.id - b.id)
    .map((c) => {
      const p = product(ctx.db, c.product_id as number);
      return {
        product_id: p.id,
        name: p.name as string,
        quantity: c.quantity as number,
        price: p.price as number,
      };
    });
}

const total = (items: Item[]) => cents(items.reduce((s, i) => s + i.price * i.quantity, 0));

function orderView(o: Row): Json {
  const items = o.items as Item[];
  return {
    order_id: o.id,
    status: o.status as string,
    total: o.total as number,
    card_id: o.card_id as number,
    created_at: o.created_at as string,
    items,
  };
}

/** Shop: a product catalog, the user's cart, checkout with a supervisor payment card, orders and returns. */
export const shop: AppModule = {
  spec: defineApp(
    "shop",
    "Buy products: search, cart, checkout with a payment card, orders and returns.",
    [
      loginApi("shop"),
      {
        name: "search_products",
        description: "Search products by name; optionally by category and maximum price.",
        params: [
          opt("query", "string", "text in the product name", ""),
          opt("category", "string", CATEGORIES.join(", ")),
          opt("max_price", "number", "only products at this price or less"),
        ],
        returns: `[{${PRODUCT_FIELDS.join(", ")}}] cheapest first`,
        errors: ["unknown category"],
        paged: true,
        handler: (ctx, args) => {
          if (args.category != null && !CATEGORIES.includes(args.category as string))
            throw new ApiError(
              `Unknown category '${args.category}'. Categories: ${CATEGORIES.join(", ")}.`,
            );
          return table(ctx.db, "products")
            .filter((r) => matchesQuery(r, args.query, ["name"]))
            .filter((r) => args.category == null || r.category === args.category)
            .filter(
              (r) => args.max_price == null || (r.price as number) <= (args.max_price as number),
            )
            .sort((a, b) => (a.price as number) - (b.price as number) || a.id - b.id)
            .map(productView);
        },
      },
      {
        name: "show_product",
        description: "Show one product with its stock.",
        params: [req("product_id", "integer", "")],
        returns: `{${PRODUCT_FIELDS.join(", ")}, stock}`,
        errors: ["product not found"],
        handler: (ctx, args) => {
          const p = product(ctx.db, args.product_id as number);
          return { ...productView(p), stock: p.stock as number };
        },
      },
      {
        name: "add_to_cart",
        description: "Put a product in your cart; if it is already there, its quantity increases.",
        params: [req("product_id", "integer", ""), opt("quantity", "integer", "at least 1", 1)],
        returns: '{"product_id": integer, "quantity": integer} (the quantity now in the cart)',
        errors: ["product not found", "quantity below 1", "not enough stock"],
        mutates: true,
        handler: (ctx, args) => {
          const p = product(ctx.db, args.product_id as number);
          const qty = args.quantity as number;
          if (qty < 1) throw new ApiError("quantity must be at least 1.");
          const existing = owned(ctx, "cart_items").find((c) => c.product_id === p.id);
          const wanted = qty + ((existing?.quantity as number | undefined) ?? 0);
          if (wanted > (p.stock as number))
            throw new ApiError(
              `Not enough stock for product ${p.id}: ${p.stock} available, ${wanted} wanted.`,
            );
          if (existing) existing.quantity = wanted;
          else
            insert(ctx.db, "cart_items", { owner: ctx.user, product_id: p.id, quantity: wanted });
          return { product_id: p.id, quantity: wanted };
        },
      },
      {
        name: "show_cart",
        description: "Show your cart and its total.",
        returns: "{items: [{product_id, name, quantity, price}], total}",
        handler: (ctx) => {
          const items = cartItems(ctx);
          return { items, total: total(items) };
        },
      },
      {
        name: "remove_from_cart",
        description: "Remove a product (all of its quantity) from your cart.",
        params: [req("product_id", "integer", "")],
        returns: "a confirmation",
        errors: ["product not in the cart"],
        mutates: true,
        handler: (ctx, args) => {
          const item = owned(ctx, "cart_items").find((c) => c.product_id === args.product_id);
          if (!item) throw new ApiError(`Product ${args.product_id} is not in your cart.`);
          removeRow(ctx.db, "cart_items", item.id);
          return `Product ${args.product_id} removed from the cart.`;
        },
      },
      {
        name: "checkout",
        description: "Buy everything in your cart with a payment card; the cart is emptied.",
        params: [req("payment_card_id", "integer", "from supervisor.show_payment_cards")],
        returns: '{"order_id": integer, "total": number}',
        errors: ["payment card not found", "cart is empty", "not enough stock"],
        mutates: true,
        handler: (ctx, args) => {
          const card = findRow(ctx.db, "cards", (c) => c.id === args.payment_card_id);
          if (!card) throw new ApiError(`No payment card with id ${args.payment_card_id}.`);
          const items = cartItems(ctx);
          if (items.length === 0) throw new ApiError("Your cart is empty.");
          for (const i of items) {
            const stock = product(ctx.db, i.product_id).stock as number;
            if (i.quantity > stock)
              throw new ApiError(
                `Not enough stock for product ${i.product_id}: ${stock} available.`,
              );
          }
          for (const i of items) {
            const p = product(ctx.db, i.product_id);
            p.stock = (p.stock as number) - i.quantity;
          }
          for (const c of owned(ctx, "cart_items")) removeRow(ctx.db, "cart_items", c.id);
          const order = insert(ctx.db, "orders", {
            owner: ctx.user,
            items,
            total: total(items),
            status: "placed",
            card_id: card.id,
            created_at: ctx.now,
          });
          return { order_id: order.id, total: order.total as number };
        },
      },
      {
        name: "show_orders",
        description: "Your orders, newest first.",
        returns: `[{${ORDER_FIELDS.join(", ")}}]`,
        paged: true,
        handler: (ctx) =>
          newestFirst(owned(ctx, "orders"), "created_at").map((o) => ({
            order_id: o.id,
            status: o.status as string,
            total: o.total as number,
            item_count: (o.items as Item[]).reduce((s, i) => s + i.quantity, 0),
            created_at: o.created_at as string,
          })),
      },
      {
        name: "show_order",
        description: "Show one of your orders with its items.",
        params: [req("order_id", "integer", "")],
        returns:
          "{order_id, status, total, card_id, created_at, items: [{product_id, name, quantity, price}]}",
        errors: ["order not found"],
        handler: (ctx, args) =>
          orderView(getRow(ctx.db, "orders", args.order_id as number, "order", ctx.user)),
      },
      {
        name: "return_order",
        description:
          "Return a delivered order; it is refunded to its card and the items go back in stock.",
        params: [req("order_id", "integer", "")],
        returns: "a confirmation",
        errors: ["order not found", "order is not delivered"],
        mutates: true,
        handler: (ctx, args) => {
          const o = getRow(ctx.db, "orders", args.order_id as number, "order", ctx.user);
          if (o.status !== "delivered")
            throw new ApiError(
              `Only delivered orders can be returned; order ${o.id} is ${o.status}.`,
            );
          for (const i of o.items as Item[]) {
            const p = findRow(ctx.db, "products", (r) => r.id === i.product_id);
            if (p) p.stock = (p.stock as number) + i.quantity;
          }
          o.status = "returned";
          return `Order ${o.id} returned; ${o.total} refunded to card ${o.card_id}.`;
        },
      },
    ],
  ),
  seed: ({ db, user, today, rng }) => {
    for (const category of CATEGORIES)
      for (const [name, lo, hi] of PRODUCTS[category] ?? [])
        insert(db, "products", {
          name,
          category,
          price: cents(rng.int(lo, hi) + rng.pick([0, 0.49, 0.99])),
          stock: rng.chance(0.1) ? 0 : rng.int(2, 40),
          rating: rng.int(30, 50) / 10,
        });
    const products = table(db, "products");
    const cards = table(db, "cards");
    const days = rng.sample(
      Array.from({ length: 120 }, (_, i) => i + 1),
      6,
    );
    days.sort((a, b) => b - a);
    days.forEach((ago, n) => {
      const items: Item[] = rng.sample(products, rng.int(1, 3)).map((p) => ({
        product_id: p.id,
        name: p.name as string,
        quantity: rng.chance(0.25) ? 2 : 1,
        price: p.price as number,
      }));
      // Older orders were delivered (one of them returned); the newest is still on its way.
      const status = n === days.length - 1 ? "placed" : n === 1 ? "returned" : "delivered";
      insert(db, "orders", {
        owner: user.email,
        items,
        total: total(items),
        status,
        card_id: cards.length > 0 ? rng.pick(cards).id : null,
        created_at: stampDaysAgo(today, rng, ago, [8, 22]),
      });
    });
  },
};
