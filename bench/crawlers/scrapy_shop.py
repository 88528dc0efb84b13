"""
Crawler child: the Scrapy spider a Scrapy user would write for the same crawl of the fixture shop
as plainCrawlee.ts — one callback per page type, links followed with the same selectors, the same
product fields, items to a JSON Lines feed in the case's storage dir. Run by CrawlerProcess from
this script (no Scrapy project), with Scrapy's defaults but for the settings below.

    python3 -B bench/crawlers/scrapy_shop.py '<CrawlerCase as JSON>'
"""
import json
import re
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import scrapy
from scrapy.crawler import CrawlerProcess

from scrapy_measure import Measurement, report, report_and_exit


def without_query(url):
    """
    As plainCrawlee's withoutQuery: Scrapy's request fingerprint drops the fragment but keeps
    `?ref=…` and `utm_*`, so without this each product would be fetched up to three times.
    """
    return urlunsplit(urlsplit(url)._replace(query='', fragment=''))


def text(selection):
    """All the text in the selected elements, trimmed: cheerio's `.text().trim()`."""
    return ''.join(selection.css('::text').getall()).strip()


class ShopSpider(scrapy.Spider):
    name = 'shop'

    def __init__(self, shop_url, start_urls_file=None, **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [f'{shop_url}/']
        self.start_urls_file = start_urls_file

    def start_requests(self):
        """
        The shop's home, or the listing pages the case's startUrlsFile lists (one URL a line), each
        handled as a listing, read lazily as Scrapy asks for more start requests.
        """
        if self.start_urls_file is None:
            yield from super().start_requests()
            return
        with open(self.start_urls_file, encoding='utf8') as lines:
            for line in lines:
                if line.strip():
                    yield scrapy.Request(line.strip(), callback=self.parse_listing)

    def parse(self, response):
        yield from response.follow_all(css='a.category-link', callback=self.parse_listing)

    def parse_listing(self, response):
        for href in response.css('a.product-link::attr(href)').getall():
            yield response.follow(without_query(response.urljoin(href)), callback=self.parse_product)
        yield from response.follow_all(css='a.next', callback=self.parse_listing)

    def parse_product(self, response):
        availability = response.css('p.availability')[:1]
        available = re.search(r'\((\d+) available\)', text(availability))
        price = re.sub(r'[^0-9.]', '', text(response.css('.buy-box .price')))
        yield {
            'url': response.url,
            'title': text(response.css('h1.product-title')),
            'price': float(price) if price else 0,
            'currency': response.css('.buy-box .price::attr(data-currency)').get(),
            'sku': text(response.css('.buy-box .sku')),
            'availability': 'in_stock' if 'in-stock' in availability.attrib.get('class', '').split() else 'out_of_stock',
            'stock': int(available[1]) if available else 0,
            'description': text(response.css('.description')),
            'category': text(response.css('nav.breadcrumb a.breadcrumb-category')),
        }
        for href in response.css('a.related-link::attr(href)').getall():
            yield response.follow(without_query(response.urljoin(href)), callback=self.parse_product)


def main():
    crawler_case = json.loads(sys.argv[1])
    feed = Path(crawler_case['storageDir']) / 'items.jsonl'
    concurrency = crawler_case['maxConcurrency']
    process = CrawlerProcess({
        'CONCURRENT_REQUESTS': concurrency,
        'CONCURRENT_REQUESTS_PER_DOMAIN': concurrency,
        'DOWNLOAD_DELAY': 0,
        # dragnet obeys robots.txt too.
        'ROBOTSTXT_OBEY': True,
        'AUTOTHROTTLE_ENABLED': False,
        'TELNETCONSOLE_ENABLED': False,
        # Scrapy logs to stderr; at ERROR nothing reaches it on a clean crawl.
        'LOG_LEVEL': 'ERROR',
        # What `scrapy startproject` sets; 2.8's default ('2.6') only adds a deprecation warning.
        'REQUEST_FINGERPRINTER_IMPLEMENTATION': '2.7',
        'FEEDS': {feed.as_uri(): {'format': 'jsonlines', 'encoding': 'utf8'}},
        # TWISTED_REACTOR left unset: Scrapy 2.8's default, Twisted's epoll reactor. The asyncio
        # reactor (what `scrapy startproject` writes since 2.7) was not faster: 3 runs each,
        # alternating, medians 100 vs 102 pages/s on the cpu case (2,000 products) with 5% more
        # CPU per page, 88 vs 84 steady pages/s on the latency case — noise either way.
    })

    measurement = Measurement(crawler_case['sampleIntervalMs'])
    crawler = process.create_crawler(ShopSpider)  # installs the reactor: import it only after this
    from twisted.internet import reactor

    measurement.watch(crawler)

    def on_time_limit():
        report_and_exit({**measurement.stop(), 'crawlerPages': -1, 'items': -1, 'finished': False})

    reactor.callLater(crawler_case['timeLimitSec'] - measurement.elapsed_sec(), on_time_limit)
    process.crawl(crawler, shop_url=crawler_case['shopUrl'], start_urls_file=crawler_case.get('startUrlsFile'))
    process.start()  # returns once the crawl is done, its feed closed, and the reactor stopped
    measured = measurement.stop()

    with feed.open('rb') as lines:
        items = sum(1 for _ in lines)
    # Scrapy's own count of the responses its engine handled (robots.txt included).
    crawler_pages = crawler.stats.get_value('response_received_count', 0)
    report({**measured, 'crawlerPages': crawler_pages, 'items': items, 'finished': True})


main()
